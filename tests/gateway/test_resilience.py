"""Upstreams that die, hang, never start or keep failing: reported, timed out, reconnected; others keep
working."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from sentinel_mcp.gateway.audit import read_audit
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.own_results import sentinel_info

from .helpers import alive, make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(90)


async def wait_until(predicate, timeout: float = 20.0) -> None:  # noqa: ANN001
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.05)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_upstream_killed_mid_call_is_reported_and_reconnected(data_dir, mode):
    async with running_gateway(make_config(data_dir)) as rt:
        up = rt.manager.upstreams["tb"]
        async with Client(rt.front.server, mode=mode) as c:
            first = int((await c.call_tool("tb__pid", {})).content[0].text)
            r = await c.call_tool("tb__die", {})
            assert r.is_error and sentinel_info(r)["error"] == "upstream_error", r.content[0].text
            # the pipe closes a moment before the exiting process is gone: wait for it (bounded), not race it
            await wait_until(lambda: not alive(first), timeout=5.0)
            await wait_until(lambda: up.state == "ready" and up.reconnects >= 1)
            second = int((await c.call_tool("tb__pid", {})).content[0].text)
            assert second != first and alive(second)
            assert (await c.call_tool("tb__echo", {"text": "back"})).content[0].text == "back"


async def test_upstream_killed_between_calls_is_detected_by_health_check(data_dir):
    import os
    import signal

    async with running_gateway(make_config(data_dir)) as rt:
        up = rt.manager.upstreams["tb"]
        up.health_interval = 0.2
        async with Client(rt.front.server) as c:
            first = int((await c.call_tool("tb__pid", {})).content[0].text)
            os.kill(first, signal.SIGKILL)
            await wait_until(lambda: up.reconnects >= 1 and up.state == "ready")
            second = int((await c.call_tool("tb__pid", {})).content[0].text)
            assert second != first


async def test_hanging_upstream_times_out_and_other_calls_keep_being_served(data_dir):
    cfg = make_config(data_dir, servers={"tb": toolbox_stdio(timeout=1.0), "ok": toolbox_stdio()})
    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server) as c:
            results: dict[str, object] = {}

            async def hang() -> None:
                results["hang"] = await c.call_tool("tb__hang", {})

            async with anyio.create_task_group() as tg:
                tg.start_soon(hang)
                await anyio.sleep(0.1)
                results["echo"] = await c.call_tool("ok__echo", {"text": "meanwhile"})
            assert results["echo"].content[0].text == "meanwhile"
            hung = results["hang"]
            assert hung.is_error and "did not answer within 1s" in hung.content[0].text
            assert sentinel_info(hung)["error"] == "timeout"
            assert (await c.call_tool("tb__echo", {"text": "alive"})).content[0].text == "alive"
        await rt.audit.flush()
        assert "timeout" in {r["outcome"] for r in await read_audit(rt.config.store_path)}


async def test_broken_and_slow_upstreams_never_block_the_others(data_dir):
    cfg = make_config(
        data_dir,
        servers={
            "tb": toolbox_stdio(),
            "missing": {"command": "/nonexistent/binary"},
            "crashy": {"command": "sh", "args": ["-c", "echo boom >&2; exit 3"]},
            "silent": {"command": "sleep", "args": ["60"], "connect_timeout": 1.0},
        },
    )
    with anyio.fail_after(20):
        async with running_gateway(cfg, startup_wait=3.0) as rt:
            # start-up went on without the broken ones; tb is ready (or becomes so on a loaded machine)
            await wait_until(lambda: rt.manager.upstreams["tb"].state == "ready")
            for name in ("missing", "crashy", "silent"):
                assert rt.manager.upstreams[name].state != "ready"
            await wait_until(lambda: rt.manager.upstreams["missing"].last_error is not None)
            assert "not found" in rt.manager.upstreams["missing"].last_error
            async with Client(rt.front.server) as c:
                assert (await c.call_tool("tb__echo", {"text": "fine"})).content[0].text == "fine"
                r = await c.call_tool("crashy__anything", {})
                assert r.is_error and "not connected now: " in r.content[0].text


async def test_circuit_breaker_opens_after_repeated_failures(data_dir):
    cfg = make_config(data_dir, servers={"tb": toolbox_stdio(timeout=0.3)})
    async with running_gateway(cfg) as rt:
        up = rt.manager.upstreams["tb"]
        up.breaker.failure_threshold = 2
        up.breaker.cooldown = 60
        async with Client(rt.front.server) as c:
            for _ in range(2):
                assert "did not answer" in (await c.call_tool("tb__hang", {})).content[0].text
            r = await c.call_tool("tb__echo", {"text": "x"})
            assert r.is_error and "circuit open" in r.content[0].text
            up.breaker.cooldown = 0  # half-open: one probe goes through and closes it again
            assert (await c.call_tool("tb__echo", {"text": "probe"})).content[0].text == "probe"
            assert up.breaker.state == "closed"


async def test_caller_cancelling_mid_call_is_audited_and_harmless(data_dir):
    async with running_gateway(make_config(data_dir)) as rt:
        async with Client(rt.front.server) as c:
            with anyio.move_on_after(0.5):
                await c.call_tool("tb__hang", {})
            assert (await c.call_tool("tb__echo", {"text": "ok"})).content[0].text == "ok"
        await rt.audit.flush()
        rows = await read_audit(rt.config.store_path)
        assert any(r["tool"] == "tb__hang" and r["outcome"] == "cancelled" for r in rows)


async def test_a_call_cancelled_while_its_decision_row_is_written_gets_an_outcome_row(data_dir, monkeypatch):
    """The row written ahead ("forwarded") is committed even when the caller cancels while it is written;
    the call is then not forwarded, and its record says so (an outcome row "cancelled"), never "forwarded"
    alone."""
    import asyncio

    from sentinel_mcp.core.call_request import CallRequest
    from sentinel_mcp.gateway.audit import AuditLog
    from tests.records.rig import audit_rows

    held, release = asyncio.Event(), asyncio.Event()
    write = AuditLog.write

    async def slow_decision_row(self, entry, alone=False):  # the decision row's commit takes until told
        written = await write(self, entry, alone)
        if entry.event == "decision" and entry.tool == "tb__echo":
            held.set()
            await release.wait()
        return written

    monkeypatch.setattr(AuditLog, "write", slow_decision_row)
    async with running_gateway(make_config(data_dir)) as rt:
        task = asyncio.ensure_future(
            rt.gateway.run(CallRequest(name="tb__echo", arguments={"text": "never sent"}, session_id="s1"))
        )
        await asyncio.wait_for(held.wait(), 30)
        task.cancel()
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        store = rt.config.store_path
    rows = [r for r in audit_rows(store) if r["tool"] == "tb__echo"]  # every row, not merged per call
    assert [(r["event"], r["outcome"]) for r in rows] == [("decision", "forwarded"), ("outcome", "cancelled")]
    assert "before it was forwarded" in rows[1]["error"]
