"""``"auth": "none"`` (loopback only): every local process calls every tool as ``anonymous``, but only the
person answers for it. Before, the console under "auth": "none" needed no sign-in: any process of any local
account read the inbox's CSRF token with one GET and approved the question its own call waited on, so the
confirmation of a write guarded nothing. Now the console takes the owner's console secret there too (a file
of this user's, 0600, in the private data dir: another account cannot read it), which signs in as
``anonymous``, the principal the calls run as; without it the console shows and answers nothing."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.console.console_rig import (answer_fields, console_config, csrf_of, env_for, http_sentinel,
                                      items_of, text)

pytestmark = pytest.mark.timeout(240)


def open_config(tmp: Path) -> Path:
    cfg = console_config(tmp)
    body = json.loads(cfg.read_text())
    body["sentinel"]["http"] = {"auth": "none"}
    cfg.write_text(json.dumps(body))
    return cfg


async def _sign_in(http: httpx2.AsyncClient, base: str, secret: str) -> httpx2.Response:
    form = await http.get(f"{base}/console/login")
    assert form.status_code == 200, (form.status_code, form.text[:500])
    return await http.post(f"{base}/console/login", data={"csrf": csrf_of(form.text), "secret": secret},
                           headers={"origin": base})


async def test_a_local_process_cannot_answer_the_call_it_made_under_auth_none(tmp_path):
    cfg = open_config(tmp_path)
    with http_sentinel(cfg) as (base, _proc):
        secret_file = tmp_path / "state" / "console-secret"
        assert secret_file.is_file() and secret_file.stat().st_mode & 0o077 == 0
        secret = secret_file.read_text().strip()
        http = httpx2.AsyncClient(timeout=120)
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy") as c:
            # nobody watches the console: the call is told to wait for the person's answer and retry
            first = text(await c.call_tool("tb__delete_thing", {"name": "precious"}))
            assert "deleted" not in first, first
            async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as person, \
                    httpx2.AsyncClient(timeout=60, follow_redirects=False) as intruder:
                r = await _sign_in(person, base, secret)
                assert r.status_code == 303 and r.headers["location"] == "/console/inbox", r.text[:500]
                for _ in range(300):  # the question reaches the inbox (bounded by count)
                    page = (await person.get(f"{base}/console/inbox")).text
                    if items_of(page):
                        break
                    await asyncio.sleep(0.1)
                [item] = items_of(page)
                assert "precious" in page
                fields = {"decision": "approve", **answer_fields(page, item), "asked": _asked(page, item)}
                # the process that made the call (or another account's): no page, no form, no stream
                for headers in ({}, {"authorization": "Bearer made-up-token-0123456789"},
                                {"x-api-key": "made-up-key-0123456789"}):
                    for path in ("/console/inbox", "/console/activity", "/console/events",
                                 "/console/sessions"):
                        r = await intruder.get(base + path, headers=headers)
                        assert r.status_code == 303 and r.headers["location"] == "/console/login", (
                            path, headers, r.status_code)
                    # the item's own id, any token: refused before anything is read
                    r = await intruder.post(f"{base}/console/inbox/{item}", data={**fields, "csrf": "0" * 64},
                                            headers={"origin": base, **headers})
                    assert r.status_code == 401, (headers, r.status_code)
                # the sign-in form is there, and takes no made-up secret
                r = await _sign_in(intruder, base, "not-the-secret-0123456789")
                assert r.status_code == 401
                assert "deleted" not in text(await c.call_tool("tb__delete_thing", {"name": "precious"}))
                page = (await person.get(f"{base}/console/inbox")).text
                assert items_of(page) == [item]  # still waiting: nobody answered it
                r = await person.post(f"{base}/console/inbox/{item}", data={**fields, "csrf": csrf_of(page)},
                                      headers={"origin": base})
                assert r.status_code == 303, r.text[:800]
            result = text(await c.call_tool("tb__delete_thing", {"name": "precious"}))  # the retry
            assert "deleted" in result and "precious" in result, result


def _asked(page: str, item: str) -> str:
    from tests.console.console_rig import asked_of

    shown = asked_of(page, item)
    assert shown is not None
    return shown


async def test_the_cli_prints_the_console_secret_and_a_link_that_signs_in_under_auth_none(tmp_path):
    """The person's ways in under "auth": "none": the console secret (`config console-secret`) and the
    owner's one-time link, both from this machine's user only; the link signs in as anonymous."""
    from tests.console.test_console_sign_in_limit import open_link

    cfg = open_config(tmp_path)
    out = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "config", "console-secret"],
                         capture_output=True, text=True, timeout=60, env=env_for(cfg))
    assert out.returncode == 0 and len(out.stdout.strip()) >= 16, out.stderr
    assert (tmp_path / "state" / "console-secret").read_text().strip() == out.stdout.strip()
    with http_sentinel(cfg) as (base, _proc):
        out = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "config", "console-link",
                              "--url", base], capture_output=True, text=True, timeout=60, env=env_for(cfg))
        assert out.returncode == 0 and "/console/login/once#" in out.stdout, out.stderr
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
            assert (await http.get(f"{base}/console/inbox")).status_code == 303
            r = await open_link(http, base, out.stdout.strip())
            assert r.status_code == 303 and r.headers["location"] == "/console/inbox", r.text[:500]
            page = await http.get(f"{base}/console/inbox")
            assert page.status_code == 200 and "anonymous" in page.text
