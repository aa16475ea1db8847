"""A request an upstream pushes during its handshake, while the gateway is still assembling (its upstreams
connect first: ``running_gateway``), is refused AND written to the record before the upstream hears the
refusal: it waits for the record to be attached. Before, the refusal of a push that came before the gateway's
audit was open was answered and never written (a CI run lost all four rows of
``test_handshake_requests_refused`` under load). Here the audit's open is held until the upstream's pushes
have arrived (or, before the fix, until its handshake was over), so the order that lost them is forced every
run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway import upstream_manager
from sentinel_mcp.gateway.audit import AuditLog
from sentinel_mcp.gateway.upstream_manager import UpstreamManager
from tests.gateway.helpers import make_config
from tests.gateway.test_handshake_requests_refused import BOB, CAUSES
from tests.gateway.test_push_refusals_audited import _rows

pytestmark = pytest.mark.timeout(180)
ROOT = Path(__file__).resolve().parents[2]


async def test_pushes_before_the_record_is_open_are_written_before_they_are_answered(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    managers: list[UpstreamManager] = []
    made = UpstreamManager.__init__

    def capture(self: UpstreamManager, *args: object, **kwargs: object) -> None:
        made(self, *args, **kwargs)  # type: ignore[arg-type]
        managers.append(self)

    opened = AuditLog.open

    async def held_open(self: AuditLog) -> AuditLog:
        up = managers[0].upstreams["hs"]
        with anyio.fail_after(60):  # the four pushes are all waiting (fix) or the handshake is over (main)
            while not (getattr(managers[0], "refusals_waiting", 0) >= len(CAUSES) or up.ready.is_set()):
                await anyio.sleep(0.02)
        return await opened(self)

    monkeypatch.setattr(UpstreamManager, "__init__", capture)
    monkeypatch.setattr(AuditLog, "open", held_open)
    server = {"command": sys.executable, "args": ["-m", "tests.gateway.handshake_asker_upstream"],
              "cwd": str(ROOT)}
    config = make_config(data_dir, {"hs": server}, principals=[{"name": "bob", "token": BOB}])
    async with running_gateway(config) as rt:
        assert await rt.manager.upstreams["hs"].wait_ready(30)
        async with Client(rt.front.server, mode="legacy") as c:
            result = await c.call_tool("hs__heard", {})
    assert not result.is_error, result
    text = result.content[0].text
    heard = json.loads(text[text.index("{"):])
    for method in CAUSES:  # each refused in Sentinel's words, as when the record was open
        assert "cannot be relayed" in heard[method]["message"], heard
    rows = [r for r in _rows(config.store_path) if r["outcome"] == "push_refused"]
    seen = sorted((json.loads(r["arguments"])["push"], json.loads(r["arguments"])["cause"]) for r in rows)
    assert seen == sorted(CAUSES.values()), rows
    assert getattr(managers[0], "refusals_waiting", 0) == 0


async def test_a_refusal_with_no_record_ever_attached_is_answered_after_the_bound(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A manager no gateway ever attaches to (a host that failed to assemble) holds no upstream forever."""
    monkeypatch.setattr(upstream_manager, "RECORD_WAIT_SECONDS", 0.2)
    manager = UpstreamManager()

    class Up:
        name = "hs"

    await manager._push_refused(Up(), "roots", "not_declared", "why", None)  # type: ignore[arg-type]
    assert manager.refusals_waiting == 0
    assert "before any record was attached" in caplog.text


async def test_a_refusal_waiting_is_written_once_the_hook_is_attached() -> None:
    manager = UpstreamManager()
    written: list[tuple[str, str, str]] = []

    class Up:
        name = "hs"

    async def record(upstream: str, kind: str, cause: str, _why: str, _call: object) -> None:
        written.append((upstream, kind, cause))

    async with anyio.create_task_group() as tg:
        tg.start_soon(manager._push_refused, Up(), "sampling", "unattributed", "why", None)
        with anyio.fail_after(10):
            while manager.refusals_waiting == 0:
                await anyio.sleep(0.01)
        assert written == []  # not answered yet: it waits for the record
        manager.on_push_refused = record
    assert written == [("hs", "sampling", "unattributed")]


async def test_a_flood_of_refusals_before_the_record_is_held_bounded_and_all_written() -> None:
    """A hostile upstream pushing thousands of requests while the gateway assembles: at most
    ``MAX_REFUSALS_WAITING`` wait (each a task held), the rest are answered at once and counted; every one is
    written once the record is attached."""
    manager = UpstreamManager()
    written: list[tuple[str, str, str]] = []
    most = 0

    class Up:
        name = "hs"

    async def record(upstream: str, kind: str, cause: str, _why: str, _call: object) -> None:
        written.append((upstream, kind, cause))

    flood = 20 * upstream_manager.MAX_REFUSALS_WAITING
    async with anyio.create_task_group() as tg:
        for i in range(flood):
            kind = ("roots", "sampling")[i % 2]
            tg.start_soon(manager._push_refused, Up(), kind, "unattributed", "why", None)
        with anyio.fail_after(10):
            while manager.refusals_waiting < upstream_manager.MAX_REFUSALS_WAITING:
                await anyio.sleep(0.01)
        for _ in range(20):
            await anyio.sleep(0)
            most = max(most, manager.refusals_waiting)
        assert written == []
        manager.on_push_refused = record
    assert most == upstream_manager.MAX_REFUSALS_WAITING
    assert len(written) == flood and written.count(("hs", "roots", "unattributed")) == flood // 2
    assert manager.refusals_waiting == 0
