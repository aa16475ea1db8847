"""An upstream that writes notices reaching no client as fast as its pipe takes them (progress for a call that
has ended and for no call, log lines naming no call, updates of a resource nobody subscribed to, list
changes) is read at its notice budget's pace (gateway/notice_budget.py): what the gateway reads of it is
bounded by the budget, the pause is counted and said, another principal's calls through another upstream
are answered throughout, and once it stops the upstream answers again.

Before, every notice was read, parsed and given a task of its own as fast as the upstream wrote them
(~1,400-3,000 a second here): other clients' calls went at a third of their pace. A real stdio upstream
(``notice_storm_upstream.py``), the real gateway over HTTP with a second principal, the real clients."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from sentinel_mcp.app.http_app import build_http_app
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway import notice_budget
from sentinel_mcp.identity.http_auth import http_auth_for
from tests.gateway.helpers import make_config, toolbox_stdio
from tests.gateway.test_listing_bounds import wait_until

pytestmark = pytest.mark.timeout(180)
ROOT = Path(__file__).resolve().parents[2]
BOB = "bob-token-0123456789abcdef00"
PER_SECOND, BURST = 50.0, 100
# notices already read past the budget when a pause starts: the pipe's and the reader's buffers (some 200 KiB)
# of notices of some 2 KiB each, and the chunk being handed on
IN_BUFFERS = 300


# "off": down the SDK's own stdio reader (its read stream paced: gateway/paced_reading.py)
@pytest.mark.parametrize(("changes", "lean"), [("0", "on"), ("1", "on"), ("0", "off")])
async def test_a_storm_of_notices_to_nobody_is_read_at_the_budgets_pace(
        data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changes: str, lean: str) -> None:
    monkeypatch.setenv("SENTINEL_LEAN_UPSTREAM", lean)
    monkeypatch.setattr(notice_budget, "PER_SECOND", PER_SECOND)
    monkeypatch.setattr(notice_budget, "BURST", BURST)
    storm = {"command": sys.executable, "args": ["-m", "tests.gateway.notice_storm_upstream"],
             "cwd": str(ROOT), "env": {"COUNT": str(tmp_path / "count"), "CHANGES": changes, "PAD": "2000",
                     "PYTHONPATH": str(ROOT)}}
    config = make_config(data_dir, {"st": storm, "tb": toolbox_stdio()},
                         principals=[{"name": "bob", "token": BOB}])
    auth = http_auth_for(config)
    app, holder = build_http_app(running_gateway(config), host="127.0.0.1", port=8765,
                                 auth=auth.authenticator)
    async with app.router.lifespan_context(app):
        rt = holder.runtime
        assert rt is not None
        st = rt.manager.upstreams["st"]
        assert await st.wait_ready(30) and await rt.manager.upstreams["tb"].wait_ready(30)
        http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), timeout=60,
                                  headers={"Authorization": f"Bearer {BOB}"})
        async with Client(rt.front.server, mode="legacy") as owner, \
                Client(streamable_http_client("http://127.0.0.1:8765/mcp", http_client=http)) as bob:
            started = time.monotonic()
            assert not (await owner.call_tool("st__storm", {})).is_error
            await wait_until(lambda: st.notice_budget.pauses >= 1)
            for i in range(10):  # another principal, another upstream: answered while the storm goes on
                r = await bob.call_tool("tb__echo", {"text": f"bob {i}"})
                assert not r.is_error and r.content[0].text == f"bob {i}", r
            await anyio.sleep(2)
            read = st.pushes_unrouted + st.updates_unsubscribed + st.relists_paced
            elapsed = time.monotonic() - started
            assert read <= BURST + PER_SECOND * elapsed + IN_BUFFERS, (read, elapsed)
            assert st.notice_budget.pause_until > 0  # still storming, still paced
            health = {u.name: u for u in rt.catalog_health.upstreams()}["st"]
            assert health.notice_pauses >= 1
            # it stops: the budget fills up again and the upstream answers as before
            with anyio.fail_after(60):
                assert not (await owner.call_tool("st__calm", {})).is_error
            await wait_until(lambda: (tmp_path / "count").exists())
            written = int((tmp_path / "count").read_text())
            assert written > read, (written, read)  # what it wrote waited in its pipe, not in the gateway
            await anyio.sleep(BURST / PER_SECOND)
            r = await owner.call_tool("st__ping", {})
            assert not r.is_error and st.notice_budget.wait() == 0, r
