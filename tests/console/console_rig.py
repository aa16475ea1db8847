"""Rig for the console tests: a real Sentinel (subprocess, HTTP on 127.0.0.1) over the bookings server with
the policy engine and three principals, the real MCP client (no elicitation: the console answers), and a
browser-like HTTP client that signs in through the login form and sends the forms' CSRF tokens."""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, AsyncIterator

import httpx2
from tests.support.forked_upstreams import forked_spec
from tests.identity.identity_rig import (  # noqa: F401 (re-exported)
    ALICE, BOB, CAROL, console_secret, env_for, http_sentinel, text, write_config,
)
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

CSRF = re.compile(r'name="csrf" value="([0-9a-f]{64})"')
ITEM_FORM = re.compile(r'<form method="post" action="/console/inbox/([^"]+)">')
FIELD = re.compile(r'name="(q\d+\.[^"]+)"')


TOOLBOX = Path(__file__).resolve().parent.parent / "gateway" / "toolbox_server.py"
OWNER_TOKEN = "owner-token-0123456789abcdef0"  # the owner (the machine's own user): sets the policy


def console_config(tmp: Path, **console: Any) -> Path:
    """The identity rig's config (bookings "bk" with bookings.pl; alice, bob, carol) plus the toolbox "tb",
    whose destructive ``delete_thing`` the default policy confirms (its argument lands in the question)."""
    cfg = write_config(tmp, console={"hold_seconds": 30, **console})
    body = json.loads(cfg.read_text())
    body["mcpServers"]["tb"] = forked_spec(str(TOOLBOX))
    body["sentinel"]["http"] = {
        **body["sentinel"].get("http", {}), "token": OWNER_TOKEN,
        "console_secret": console_secret(OWNER_TOKEN),
    }
    cfg.write_text(json.dumps(body))
    return cfg


def grant_consent(cfg: Path, principal: str, kind: str) -> None:
    """A standing consent given at the CLI (``consent grant``), as the device owner gives one: the principal
    may then see what the policy read from that kind of personal data (its own policy tools and the console).
    """
    out = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "consent", "grant", principal, kind],
        capture_output=True, text=True, timeout=60, env=env_for(cfg),
    )
    assert out.returncode == 0, out.stdout + out.stderr


def csrf_of(page: str) -> str:
    found = CSRF.search(page)
    assert found, page[:2000]
    return found.group(1)


def asked_of(page: str, item_id: str) -> str | None:
    """The ``asked`` digest an item's form carries on ``page`` (None: the item is not on it)."""
    action = f'action="/console/inbox/{html.escape(item_id, quote=True)}"'
    if action not in page:
        return None
    start = page.index(action)
    found = re.search(r'name="asked" value="([0-9a-f]+)"', page[start : page.index("</form>", start)])
    return found.group(1) if found else None


def items_of(page: str) -> list[str]:
    return [html.unescape(m) for m in ITEM_FORM.findall(page)]


class Browser:
    """A signed-in console user (cookie session, no bearer header), as a browser would be."""

    def __init__(self, base: str, http: httpx2.AsyncClient) -> None:
        self.base, self.http = base, http

    async def get(self, path: str, **kw: Any) -> httpx2.Response:
        return await self.http.get(self.base + path, **kw)

    async def page(self, path: str) -> str:
        r = await self.get(path)
        assert r.status_code == 200, (path, r.status_code, r.text[:500])
        return r.text

    async def post(self, path: str, data: dict[str, Any], csrf: str | None = "page",
                   headers: dict[str, str] | None = None) -> httpx2.Response:
        """Send a form as the browser sends the page's: with its CSRF token and, for an inbox item's form, the
        ``asked`` digest the page shows for that item (``"asked": None`` in ``data`` leaves it out)."""
        page = None
        if csrf == "page":
            page = await self.page("/console/inbox")
            csrf = csrf_of(page)
        data = dict(data)
        if path.startswith("/console/inbox/") and "asked" not in data:
            page = page if page is not None else await self.page("/console/inbox")
            shown = asked_of(page, path.removeprefix("/console/inbox/"))
            if shown is not None:
                data["asked"] = shown
        body = {k: v for k, v in data.items() if v is not None} | ({"csrf": csrf} if csrf is not None else {})
        return await self.http.post(
            self.base + path, data=body, headers={"origin": self.base, **(headers or {})}
        )

    async def wait_items(self, n: int = 1, timeout: float = 30) -> str:
        """The inbox page once it shows at least ``n`` items, looked at every 0.1 s for ``timeout`` seconds of
        wall clock (a count of looks would stretch with each page's own time on a loaded machine)."""
        deadline = time.monotonic() + timeout
        while True:
            page = await self.page("/console/inbox")
            shown = items_of(page)
            if len(shown) >= n:
                return page
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"waited {timeout} s for the inbox to show at least {n} item(s); it shows {len(shown)} "
                    f"{shown}: the question the test expects was never put to this principal's inbox"
                )
            await asyncio.sleep(0.1)


@contextlib.asynccontextmanager
async def signed_in(base: str, token: str) -> AsyncIterator[Browser]:
    """The person of the principal holding ``token``, signed in with that principal's console secret (the
    rigs' ``console_secret``; the token itself signs nobody in)."""
    async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
        form = await http.get(f"{base}/console/login")
        assert form.status_code == 200, (form.status_code, form.text[:2000])
        r = await http.post(
            f"{base}/console/login",
            data={"csrf": csrf_of(form.text), "secret": console_secret(token)},
            headers={"origin": base},
        )
        assert r.status_code == 303 and r.headers["location"] == "/console/inbox", r.text[:500]
        yield Browser(base, http)


@contextlib.asynccontextmanager
async def mcp_client(base: str, token: str, mode: str = "legacy") -> AsyncIterator[Client]:
    """A client that cannot elicit (declares no elicitation capability)."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode) as c:
        yield c


def answer_fields(page: str, item_id: str) -> dict[str, str]:
    """Values for every field of an item's form: the first option of a choice, text for text."""
    start = page.index(f'action="/console/inbox/{html.escape(item_id, quote=True)}"')
    form = page[start : page.index("</form>", start)]
    out = {}
    for name in FIELD.findall(form):
        select = re.search(rf'<select[^>]*name="{re.escape(name)}"[^>]*>(.*?)</select>', form, re.S)
        if select:
            options = [v for v in re.findall(r'<option value="([^"]*)"', select.group(1)) if v]
            out[name] = html.unescape(options[0])
        elif f'name="{name}" type="number"' in form:
            out[name] = "1"
        elif 'type="checkbox" name="' + name in form:
            continue
        else:
            out[name] = "because"
    return out


async def answer_rounds(person: Browser, call: asyncio.Task[Any], rounds: int = 10) -> Any:
    """Approve what the held call still asks, round after round (a reason first, then the confirmation that
    lists what was established), until the call returns. Looks bounded by count: a loaded machine may take
    several looks before a round is posted (four looks of 3 s could miss the second round, and the call then
    waited for it in vain)."""
    for _ in range(rounds):
        done, _pending = await asyncio.wait({call}, timeout=3)
        if done:
            return call.result()
        page = await person.page("/console/inbox")
        for item in items_of(page):
            await person.post(f"/console/inbox/{item}", {"decision": "approve", **answer_fields(page, item)})
    return await asyncio.wait_for(call, 60)
