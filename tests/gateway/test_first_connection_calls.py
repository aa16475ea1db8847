"""A call that comes while its upstream still makes its first connection waits for it
(first_connections.py): the tool found then, the call goes on; not found, the unknown-tool answer as before.
Never for an upstream that already failed once, bounded, ended by the caller's cancel and by the gateway's
stop.

A real gateway over a real stdio upstream that answers only once the test opens its gate (gated_toolbox.py):
which answer comes while the gate is closed is what is checked, no clock."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway import first_connections

from .helpers import make_config

pytestmark = pytest.mark.timeout(120)
GATED = str(Path(__file__).with_name("gated_toolbox.py"))


def gated(gate: Path, **extra: Any) -> dict[str, Any]:
    env = {"GATE": str(gate), **extra.pop("env", {})}
    return {"command": sys.executable, "args": [GATED], "env": env, **extra}


async def wait_until(predicate, timeout: float = 60.0) -> None:  # noqa: ANN001
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.02)


def text(result: Any) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content)


def call_later(c: Client, name: str, got: dict[str, Any], **arguments: Any) -> Any:
    """A task that calls ``name`` and keeps its answer in ``got``."""

    async def call() -> None:
        got[name] = await c.call_tool(name, arguments)

    return call


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_call_during_the_first_connection_waits_and_goes_on(data_dir, tmp_path, mode):
    gate = tmp_path / "gate"
    cfg = make_config(data_dir, {"tb": gated(gate)})
    async with running_gateway(cfg, startup_wait=0.1) as rt:
        tb = rt.manager.upstreams["tb"]
        assert tb.state == "connecting"  # served without it for now, as before
        got: dict[str, Any] = {}
        async with Client(rt.front.server, mode=mode) as c, anyio.create_task_group() as tg:
            tg.start_soon(call_later(c, "tb__echo", got, text="first"))
            tg.start_soon(call_later(c, "tb__nothing", got))
            await wait_until(lambda: rt.gateway.calls_in_flight.get("owner", 0) == 2 or got)
            await anyio.sleep(0.3)  # (nothing answers while the gate is closed, however long)
            assert got == {} and tb.state == "connecting"
            gate.touch()
        # found once it connected: guarded, forwarded, answered; a name it does not have: unknown, as before
        assert not got["tb__echo"].is_error and text(got["tb__echo"]) == "first"
        assert got["tb__nothing"].is_error
        said = text(got["tb__nothing"])
        assert "unknown tool 'tb__nothing'" in said and "not connected" not in said, said
        assert rt.gateway.calls_in_flight.get("owner", 0) == 0
        rows = {r.get("tool"): r for r in await rt.audit.read(tail=10)}
        assert rows["tb__echo"].get("decision") == "allow", rows
        assert rows["tb__nothing"].get("outcome") == "unknown_tool", rows


async def test_the_wait_ends_with_the_first_attempt_and_never_waits_for_a_later_one(data_dir, tmp_path):
    """connect_timeout ends the first attempt (and the wait); a call during the second attempt answers at
    once: it comes and goes while that attempt still waits at the gate."""
    gate = tmp_path / "gate"
    cfg = make_config(data_dir, {"tb": gated(gate, connect_timeout=1.0)})
    async with running_gateway(cfg, startup_wait=0.1) as rt, Client(rt.front.server) as c:
        tb = rt.manager.upstreams["tb"]
        first = await c.call_tool("tb__echo", {"text": "x"})
        assert first.is_error and "not connected now: tb" in text(first), text(first)
        # (the wait ends at the attempt's deadline: that attempt's end may come a moment later)
        await wait_until(lambda: tb.first_listed.is_set() and tb.last_error is not None)
        await wait_until(lambda: tb.reconnects >= 1 and tb.state == "connecting")
        tries = tb.reconnects
        again = await c.call_tool("tb__echo", {"text": "x"})
        assert again.is_error and "not connected now: tb" in text(again)
        assert tb.reconnects == tries and tb.state == "connecting"  # that attempt was not waited for


async def test_a_failed_first_attempt_answers_at_once(data_dir, tmp_path):
    gate = tmp_path / "gate"
    cfg = make_config(data_dir, {"tb": gated(gate, env={"FAIL_ONCE": str(tmp_path / "failed")})})
    async with running_gateway(cfg, startup_wait=0.1) as rt, Client(rt.front.server) as c:
        tb = rt.manager.upstreams["tb"]
        await wait_until(lambda: tb.reconnects >= 1 and tb.state == "connecting")  # the 2nd attempt, gated
        got = await c.call_tool("tb__echo", {"text": "x"})
        assert got.is_error and "not connected now: tb" in text(got)
        assert tb.state == "connecting" and not gate.exists()


async def test_the_wait_is_capped(data_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(first_connections, "FIRST_CONNECT_WAIT_CAP", 0.2)
    gate = tmp_path / "gate"
    cfg = make_config(data_dir, {"tb": gated(gate, connect_timeout=600)})
    async with running_gateway(cfg, startup_wait=0.1) as rt, Client(rt.front.server) as c:
        got = await c.call_tool("tb__echo", {"text": "x"})
        assert got.is_error and "not connected now: tb" in text(got)
        assert rt.manager.upstreams["tb"].state == "connecting"


async def test_the_callers_cancel_and_the_gateways_stop_end_the_wait(data_dir, tmp_path):
    gate = tmp_path / "gate"
    cfg = make_config(data_dir, {"tb": gated(gate)})
    async with running_gateway(cfg, startup_wait=0.1) as rt, Client(rt.front.server) as c:
        tb = rt.manager.upstreams["tb"]
        got: dict[str, Any] = {}
        async with anyio.create_task_group() as tg:
            tg.start_soon(call_later(c, "tb__echo", got, text="x"))
            await wait_until(lambda: rt.gateway.calls_in_flight.get("owner", 0) == 1 or got)
            assert got == {}
            tg.cancel_scope.cancel()  # the client gives up: it says so (notifications/cancelled)
        await wait_until(lambda: rt.gateway.calls_in_flight.get("owner", 0) == 0)
        assert tb.state == "connecting" and not tb.first_listed.is_set()
        async with anyio.create_task_group() as tg:
            tg.start_soon(call_later(c, "tb__echo", got, text="x"))
            await wait_until(lambda: rt.gateway.calls_in_flight.get("owner", 0) == 1 or got)
            assert got == {}
            await rt.manager.stop()
        assert got["tb__echo"].is_error and "unknown tool" in text(got["tb__echo"])
        assert not gate.exists()


async def test_waiting_calls_count_among_their_principals_calls(data_dir, tmp_path):
    gate = tmp_path / "gate"
    cfg = make_config(data_dir, {"tb": gated(gate)})
    async with running_gateway(cfg, startup_wait=0.1) as rt, Client(rt.front.server) as c:
        rt.gateway.max_calls_in_flight = 2
        got: dict[str, Any] = {}
        async with anyio.create_task_group() as tg:
            tg.start_soon(call_later(c, "tb__echo", got, text="a"))
            tg.start_soon(call_later(c, "tb__add", got, a=1, b=2))
            await wait_until(lambda: rt.gateway.calls_in_flight.get("owner", 0) == 2 or got)
            assert got == {}
            third = await c.call_tool("tb__echo", {"text": "c"})
            assert third.is_error and "calls of yours are already running" in text(third), text(third)
            gate.touch()
        assert text(got["tb__echo"]) == "a"


async def test_a_slow_upstream_holds_up_no_call_of_anothers_tool(data_dir, tmp_path):
    """Two upstreams in their first connection: a call of the first one's tool goes on once it is there,
    while the other still waits at its gate."""
    gate, never = tmp_path / "gate", tmp_path / "never"
    # (the slow one listed first; its first attempt ends at its connect_timeout: 45 s)
    cfg = make_config(data_dir, {"slow": gated(never, connect_timeout=45), "tb": gated(gate)})
    async with running_gateway(cfg, startup_wait=0.1) as rt, Client(rt.front.server) as c:
        got: dict[str, Any] = {}
        async with anyio.create_task_group() as tg:
            tg.start_soon(call_later(c, "tb__echo", got, text="soon"))
            await wait_until(lambda: rt.gateway.calls_in_flight.get("owner", 0) == 1 or got)
            assert got == {}
            gate.touch()
        slow = rt.manager.upstreams["slow"]
        assert text(got["tb__echo"]) == "soon"
        # answered within the slow one's first attempt (whose end the call did not wait for)
        assert slow.first_deadline is not None and anyio.current_time() < slow.first_deadline
        assert slow.reconnects == 0 and not slow.first_listed.is_set() and not never.exists()
