"""A hostile upstream floods what it tells a caller beside its answer (2,000 log lines, progress reports or
resource updates at once) at a client that takes its time over each: what waits for that client is bounded,
a call's log lines and progress still reach it in order and before its answer, the latest progress always,
and a client that never takes its notices holds up nobody else's answer. A real stdio upstream process
(``hostile_stdio_upstream.py``), down the lean path and the SDK's.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.caller_link import CallerLink
from sentinel_mcp.gateway import notice_queue
from sentinel_mcp.gateway.catalog_health import CatalogHealth
from sentinel_mcp.gateway.notice_queue import MAX_WAITING_FOR_ONE
from sentinel_mcp.gateway.upstream import Upstream, UpstreamHooks
from tests.gateway.helpers import make_config
from tests.gateway.hostile_stdio_upstream import FLOOD, FLOOD_URI, NEAR_URIS
from tests.gateway.test_lean_stdio import HOSTILE, ROOT, _with_upstream

pytestmark = pytest.mark.timeout(240)
PATHS = pytest.mark.parametrize("lean", [True, False], ids=["lean", "sdk"])


class SlowLogs(CallerLink):
    """A client that takes ``hold`` seconds over each log line (forever if ``hold`` is None)."""

    who = "the test's caller"

    def __init__(self, hold: float | None) -> None:
        self.hold, self.got, self.now, self.most = hold, [], 0, 0
        self.started = anyio.Event()

    async def log(self, params: Any) -> None:
        self.now += 1
        self.most = max(self.most, self.now)
        self.started.set()
        try:
            await (anyio.sleep(self.hold) if self.hold is not None else anyio.Event().wait())
            self.got.append(params.data)
        finally:
            self.now -= 1


async def _watching_held(up: Upstream, call: Any) -> tuple[Any, int]:
    """``call()``'s result and the most notices the upstream held at once meanwhile."""
    most = 0
    result: Any = None

    async def run() -> None:
        nonlocal result
        result = await call()
        tg.cancel_scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        while True:
            most = max(most, up.notices.held)
            await anyio.sleep(0.005)
    return result, most


@PATHS
def test_a_flood_of_log_lines_waits_in_bounds_and_in_order(
    lean: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,000 log lines at once to a client that takes 0.2 s over each: one at a time, in order; at most
    ``MAX_WAITING_FOR_ONE`` wait (the rest dropped and counted); the answer follows the lines it waited for,
    within ``FLUSH_SECONDS``; every slot is given back."""
    monkeypatch.setattr(notice_queue, "FLUSH_SECONDS", 1.0)
    slow = SlowLogs(0.2)

    async def body(up: Upstream) -> tuple[Any, int, int]:
        r, most = await _watching_held(up, lambda: up.call_tool("log_flood", {}, link=slow))
        return r, most, up.notices.dropped

    r, most, dropped = anyio.run(lambda: _with_upstream(HOSTILE, body, protocol="legacy", lean=lean))
    assert not r.is_error and r.content[0].text == "hostile ok", r
    assert slow.most == 1 and 1 <= len(slow.got) < FLOOD
    assert slow.got == [f"line {i}" for i in range(len(slow.got))]  # the first ones, in order
    assert most == MAX_WAITING_FOR_ONE + 1, most  # one being delivered, the rest waiting
    assert dropped + len(slow.got) == FLOOD, (dropped, len(slow.got))


@PATHS
def test_a_flood_of_progress_is_coalesced_and_the_latest_arrives_before_the_answer(
    lean: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(notice_queue, "FLUSH_SECONDS", 60.0)  # this test's client is slow, never stuck
    seen: list[float] = []
    answered_after: list[int] = []

    async def progress(p: float, total: float | None, message: str | None) -> None:
        await anyio.sleep(0.01)
        assert total == FLOOD
        seen.append(p)

    async def body(up: Upstream) -> tuple[Any, int]:
        r, most = await _watching_held(
            up, lambda: up.call_tool("progress_flood", {}, progress=progress)
        )
        answered_after.append(len(seen))
        return r, most

    r, most = anyio.run(lambda: _with_upstream(HOSTILE, body, protocol="legacy", lean=lean))
    assert not r.is_error, r
    assert seen[-1] == FLOOD and answered_after == [len(seen)]  # the latest, and before the answer
    assert seen == sorted(set(seen)) and len(seen) < FLOOD // 2, len(seen)  # in order, coalesced
    assert most <= MAX_WAITING_FOR_ONE + 1, most


def _recording_updates(got: list[str], delay: float = 0.0) -> UpstreamHooks:
    """Hooks that append each resource update's URI to ``got`` (after ``delay``: a slow client)."""

    async def updated(_up: Upstream, uri: str) -> None:
        if delay:
            await anyio.sleep(delay)
        got.append(uri)

    async def nothing(*_: Any) -> None:
        return None

    return UpstreamHooks(catalog_changed=nothing, resource_updated=updated)


@PATHS
def test_a_flood_of_resource_updates_is_coalesced(lean: bool) -> None:
    got: list[str] = []

    async def body(up: Upstream) -> tuple[Any, int, str]:
        up.hooks = _recording_updates(got, delay=0.01)
        await up.subscribe(FLOOD_URI)
        r, most = await _watching_held(up, lambda: up.call_tool("updated_flood", {}))
        busy = up.notices.held  # still on their way: the answer did not wait for them
        nxt = (await up.call_tool("noop", {})).content[0].text
        with anyio.fail_after(30):
            while up.notices.held:
                await anyio.sleep(0.01)
        return r, max(most, busy), nxt

    r, most, nxt = anyio.run(lambda: _with_upstream(HOSTILE, body, protocol="legacy", lean=lean))
    assert not r.is_error and nxt == "ok"
    assert got and set(got) == {FLOOD_URI} and len(got) < FLOOD // 2, len(got)
    assert most <= MAX_WAITING_FOR_ONE + 1, most


@PATHS
def test_updates_of_resources_nobody_subscribed_to_are_dropped_at_once_and_counted(
    lean: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """2,000 "updated" notices, each for a URI no client subscribed to: none takes a place in the notice
    queue or reaches the front, each is counted, and the log says so a dozen times, not 2,000; the update the
    upstream sends right behind its answer to a real subscription is let through."""
    got: list[str] = []

    async def body(up: Upstream) -> tuple[Any, int, int]:
        up.hooks = _recording_updates(got)
        await up.subscribe("hostile://real")  # answered, then "updated" for it at once
        r, most = await _watching_held(up, lambda: up.call_tool("stray_updates", {}))
        with anyio.fail_after(30):
            while up.notices.held or not got:
                await anyio.sleep(0.01)
        await up.subscribe("hostile://real", on=False)
        manager = SimpleNamespace(upstreams={"tb": up})  # what /metrics reads, as the gateway's has it
        return r, most, CatalogHealth(manager).upstreams()[0].updates_unsubscribed  # type: ignore[arg-type]

    caplog.set_level("INFO", logger="sentinel_mcp.gateway.upstream_relays")
    r, most, counted = anyio.run(lambda: _with_upstream(HOSTILE, body, protocol="legacy", lean=lean))
    assert not r.is_error
    assert got == ["hostile://real"], got[:5]
    assert most == 0 and counted == FLOOD, (most, counted)
    said = [m for m in caplog.messages if "not subscribed here" in m]
    assert 1 <= len(said) <= 12, len(said)


@PATHS
def test_near_spellings_of_a_subscribed_uri_and_no_uri_at_all_are_not_its_updates(lean: bool) -> None:
    """Subscribed to "hostile://real", the upstream sends updates for near spellings of it (case, a slash, an
    escape, spaces, an invisible character, another scheme) and for values that are no string: none is taken
    for the subscribed resource, the string ones are counted, and the call is answered."""
    got: list[str] = []

    async def body(up: Upstream) -> tuple[Any, int, str]:
        up.hooks = _recording_updates(got)
        await up.subscribe("hostile://real")  # answered, then "updated" for it at once
        with anyio.fail_after(30):
            while not got:
                await anyio.sleep(0.01)
        r = await up.call_tool("near_updates", {})
        nxt = (await up.call_tool("noop", {})).content[0].text
        with anyio.fail_after(30):
            while up.notices.held:
                await anyio.sleep(0.01)
        return r, up.updates_unsubscribed, nxt

    r, counted, nxt = anyio.run(lambda: _with_upstream(HOSTILE, body, protocol="legacy", lean=lean))
    assert not r.is_error and nxt == "ok"
    assert got == ["hostile://real"], got
    assert counted == sum(isinstance(u, str) for u in NEAR_URIS), counted  # the rest never parse as updates


@PATHS
def test_a_client_that_never_takes_its_log_lines_holds_up_no_other_answer(
    lean: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 2026-era upstream (calls overlap): call A's client never takes the lines A's upstream logs; call B,
    made meanwhile, is answered at once; A is answered after ``FLUSH_SECONDS`` and its slots are given back.
    (Before, the lean reader delivered each line itself and waited for A's client: B's answer sat behind.)"""
    monkeypatch.setattr(notice_queue, "FLUSH_SECONDS", 3.0)  # B, made meanwhile, has 3 s to be answered
    stuck = SlowLogs(None)
    order: list[str] = []

    async def body(up: Upstream) -> Any:
        async def a() -> None:
            r = await up.call_tool("log_flood", {}, link=stuck)
            order.append("A " + r.content[0].text)

        async with anyio.create_task_group() as tg:
            tg.start_soon(a)
            with anyio.fail_after(20):
                await stuck.started.wait()
                r = await up.call_tool("noop", {})
            order.append("B " + r.content[0].text)
        with anyio.fail_after(20):
            while up.notices.held:
                await anyio.sleep(0.01)
        return up.notices.dropped

    dropped = anyio.run(lambda: _with_upstream(HOSTILE, body, protocol="modern", lean=lean))
    assert order == ["B ok", "A hostile ok"], order
    # all it was handed were dropped (lines that came while B ran too are not routed: not counted)
    assert stuck.got == [] and dropped > MAX_WAITING_FOR_ONE, dropped


@PATHS
def test_a_cancelled_call_drops_what_waits_for_it(lean: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cancelled while its client has not taken its lines: they are dropped at once (not after
    ``FLUSH_SECONDS``), every slot is given back, and the upstream's next call works."""
    monkeypatch.setattr(notice_queue, "FLUSH_SECONDS", 600.0)
    stuck = SlowLogs(None)

    async def body(up: Upstream) -> tuple[int, str]:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: up.call_tool("log_flood", {}, link=stuck))
            with anyio.fail_after(20):
                await stuck.started.wait()
            tg.cancel_scope.cancel()
        with anyio.fail_after(20):
            while up.notices.held:
                await anyio.sleep(0.01)
        return up.notices.dropped, (await up.call_tool("noop", {})).content[0].text

    dropped, nxt = anyio.run(lambda: _with_upstream(HOSTILE, body, protocol="legacy", lean=lean))
    assert stuck.got == [] and dropped > 0 and nxt == "ok"


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_a_flood_of_progress_through_the_gateway_arrives_in_order_and_before_the_answer(
    data_dir, era: str
) -> None:
    """A real client (both eras; its SDK runs each progress callback as a task of its own, so it is never
    slow itself): every report it is shown comes in the order sent, the last one the upstream sent among
    them, all before the answer."""
    seen: list[float] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        seen.append(p)  # on arrival (the callbacks run side by side)

    servers = {"h": {"command": HOSTILE[0], "args": HOSTILE[1:], "cwd": str(ROOT), "protocol": "legacy"}}
    async with running_gateway(make_config(data_dir, servers)) as rt:
        async with Client(rt.front.server, mode=era) as c:
            r = await c.call_tool("h__progress_flood", {}, progress_callback=on_progress)
            assert not r.is_error, r.content
            answered_after = list(seen)
    assert answered_after and answered_after[-1] == FLOOD, answered_after[-3:]
    assert answered_after == sorted(set(answered_after)) and seen == answered_after


def test_a_log_lines_data_is_kept_bounded_while_it_waits() -> None:
    """Text past 16,000 characters is cut; structured data that long becomes its JSON text, cut; data nested
    deeper than it can be written is replaced (it must never fault the reader that hands it over)."""
    from mcp.types import LoggingMessageNotificationParams as Line

    from sentinel_mcp.gateway.upstream_relays import LOG_DATA_BYTES, _bounded_log

    assert _bounded_log(Line(level="info", data="x" * 50_000)).data == "x" * LOG_DATA_BYTES
    cut = _bounded_log(Line(level="info", data={"k": "v" * 50_000})).data
    assert isinstance(cut, str) and len(cut) == LOG_DATA_BYTES and cut.startswith('{"k": "vvv')
    small = Line(level="info", data={"k": [1, 2]})
    assert _bounded_log(small) is small
    deep: list = []
    inner = deep
    for _ in range(100_000):
        inner.append([])
        inner = inner[0]
    assert _bounded_log(Line(level="info", data=deep)).data == "[log data not shown: nested too deep]"
