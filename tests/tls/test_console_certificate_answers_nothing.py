"""A client certificate is a client's credential as much as a token is: the MCP client (or an A2A peer) that
presents it on ``/mcp`` presents the very same one to ``/console``. It read the inbox (and the CSRF token the
page carries) and approved the question its own call was waiting on, with provenance ``user``, as a bearer
header once did (``tests/console/test_console_credentials.py``). A certificate alone now reads pages and
answers nothing; the person answers from a console session signed in with the console secret (which, on a
certificate's browser, must name the certificate's principal).
"""

from __future__ import annotations

import json
import re
import sys
import uuid

import httpx2
import pytest
from tests.console.console_rig import TOOLBOX, asked_of, csrf_of, items_of, text
from tests.identity.identity_rig import BOB, console_secret
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.tls.tls_rig import client_context, https_sentinel, tls_config

pytestmark = pytest.mark.timeout(240)
LOGIN_CSRF = re.compile(r'name="csrf" value="([0-9a-f]{64})"')


def _config(tmp_path, pki):
    cfg = tls_config(tmp_path, pki, console={"hold_seconds": 0})
    body = json.loads(cfg.read_text())
    body["mcpServers"]["tb"] = {"command": sys.executable, "args": [str(TOOLBOX)]}
    cfg.write_text(json.dumps(body))
    return cfg


async def test_a_client_certificate_reads_the_inbox_but_never_answers_for_the_person(tmp_path, pki):
    with https_sentinel(_config(tmp_path, pki), pki) as (base, _):
        ctx = client_context(pki, pki.bob)
        # a client that cannot elicit: its question waits in the console
        http = httpx2.AsyncClient(verify=ctx, timeout=120)
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy") as client:
            args = {"name": f"bob-{uuid.uuid4().hex[:6]}"}
            first = await client.call_tool("tb__delete_thing", args)
            assert first.is_error and "/console/inbox" in text(first), text(first)
            # the client itself, with the certificate it called with (no sign-in, no cookie)
            async with httpx2.AsyncClient(verify=ctx, timeout=60, follow_redirects=False) as script:
                page = await script.get(f"{base}/console/inbox")
                assert page.status_code == 200, page.status_code  # a certificate may read
                assert "Sign in to answer" in page.text
                [item] = items_of(page.text)
                r = await script.post(
                    f"{base}/console/inbox/{item}",
                    data={"decision": "approve", "csrf": csrf_of(page.text),
                          "asked": asked_of(page.text, item)},
                    headers={"origin": base},
                )
                assert r.status_code == 403, (r.status_code, r.text[:300])
                # nor any other form of the person's
                r = await script.post(f"{base}/console/logout", data={"csrf": csrf_of(page.text)},
                                      headers={"origin": base})
                assert r.status_code == 403, r.status_code
                assert item in items_of((await script.get(f"{base}/console/inbox")).text)  # still open
            again = await client.call_tool("tb__delete_thing", args)
            assert again.is_error and "deleted" not in text(again), text(again)

            # the person, on a browser showing the same certificate, signs in with the console secret (the
            # sign-in page is shown to a certificate's viewer) and answers
            async with httpx2.AsyncClient(verify=ctx, timeout=60, follow_redirects=False) as person:
                form = await person.get(f"{base}/console/login")
                assert form.status_code == 200, (form.status_code, form.headers.get("location"))
                r = await person.post(
                    f"{base}/console/login",
                    data={"csrf": LOGIN_CSRF.search(form.text)[1], "secret": console_secret(BOB)},
                    headers={"origin": base},
                )
                assert r.status_code == 303 and r.headers["location"] == "/console/inbox", r.text[:300]
                page = await person.get(f"{base}/console/inbox")
                assert item in items_of(page.text)
                r = await person.post(
                    f"{base}/console/inbox/{item}",
                    data={"decision": "deny", "csrf": csrf_of(page.text), "asked": asked_of(page.text, item)},
                    headers={"origin": base},
                )
                assert r.status_code == 303, (r.status_code, r.text[:300])
