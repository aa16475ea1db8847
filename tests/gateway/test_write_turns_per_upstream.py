"""One principal's write held by a slow upstream holds no write elsewhere (gateway/session_writes.py,
policy/write_turns.py). Before, every write with effects of the process took one shared turn: a write to
``fast`` waited for the write to ``slow`` until that upstream answered (up to its timeout: minutes), and a
nested write was refused while any write was in flight. Now a write takes its upstream's turn and the turn of
every upstream its guard reads from: a write to ``fast`` whose guard reads ``slow``'s store still waits, and
is decided on what the write to ``slow`` did; a write to ``slow`` waits for ``slow``, at most
``policy.write_turn_seconds``, then is denied, never forwarded. Real gateway, real stdio upstreams, real
SWI-Prolog; the slow upstream is held by a FIFO the test writes to (tests/gateway/held_claim_server.py)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.gateway.session_writes import SessionWrites
from sentinel_mcp.paths import PROJECT_ROOT
from sentinel_mcp.policy.rulebase import GuardReads, RulebaseInfo
from sentinel_mcp.policy.write_turns import KEPT_TURN, turn_keys

pytestmark = pytest.mark.timeout(120)

RULES = """
fact(done/2).
binding(claimed(K, C), tool('slow__claimed', [key = K]), extract([C = '/claimed']), [fresh_for_writes]).
binding(fast_claimed(K, C), tool('fast__claimed', [key = K]), extract([C = '/claimed']), [fresh_for_writes]).
guard('slow__claim', [key = K], require(claimed(K, no), 'already claimed')).
guard('fast__claim', [key = K], require(fast_claimed(K, no), 'already claimed')).
guard('fast__use', [key = K], require(claimed(K, yes), 'not claimed yet')).
effect('slow__claim', [key = K], [establish(done(claim, K))]).
effect('fast__claim', [key = K], [establish(done(fast, K))]).
effect('fast__use', [key = K], [establish(done(use, K))]).
"""
SERVER = str(Path(__file__).parent / "held_claim_server.py")


def _ran(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _fifo_line(path: Path) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _release(path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write("go")


async def _arrived(held: Path) -> str:
    """The held upstream's word that the first claim reached it (a thread left behind if the test fails)."""
    return await anyio.to_thread.run_sync(_fifo_line, held / "arrived", abandon_on_cancel=True)


async def _let_go(held: Path) -> None:
    await anyio.to_thread.run_sync(_release, held / "release", abandon_on_cancel=True)


@contextlib.asynccontextmanager
async def _gateway(tmp: Path, **policy: Any) -> AsyncIterator[Any]:
    (tmp / "claims.pl").write_text(RULES, encoding="utf-8")
    held = tmp / "held"
    held.mkdir()
    os.mkfifo(held / "arrived")
    os.mkfifo(held / "release")
    slow = {"command": sys.executable, "args": [SERVER], "cwd": str(PROJECT_ROOT), "prefix": "s",
            "env": {"HELD": str(held), "RAN": str(tmp / "slow.ran")}}
    fast = {"command": sys.executable, "args": [SERVER], "cwd": str(PROJECT_ROOT),
            "env": {"RAN": str(tmp / "fast.ran")}}
    sentinel = {"rulebases": [str(tmp / "claims.pl")], "builtins": [], "data_dir": str(tmp), "policy": policy}
    cfg = parse_config({"mcpServers": {"slow": slow, "fast": fast}, "sentinel": sentinel}, base_dir=str(tmp))
    async with running_gateway(cfg) as rt:
        yield rt


async def _waiting(rt: Any, key: str, n: int) -> None:
    """Until ``n`` writes hold or wait for the shared turn ``key`` (the gateway's own count of them)."""
    shared = rt.gateway.session_writes.shared
    while shared._users.get(key, 0) < n:
        await anyio.sleep(0.01)


async def test_a_held_write_holds_only_the_writes_that_depend_on_it(tmp_path: Path) -> None:
    results: dict[str, Any] = {}
    held = tmp_path / "held"
    async with _gateway(tmp_path) as rt:

        async def call(who: str, name: str, key: str) -> None:
            async with Client(rt.front.server, mode="auto") as c:  # a conversation of its own
                results[who] = await c.call_tool(name, {"key": key})

        with anyio.fail_after(90):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call, "A", "s__claim", "k1")  # slow's write, by a name of its own
                assert await _arrived(held) == "arrived\n"
                # held by ``slow``: a write to ``fast`` deciding on ``fast`` alone goes through meanwhile
                await call("B", "fast__claim", "k1")
                assert not results["B"].is_error, results["B"].content
                assert _ran(tmp_path / "fast.ran") == ["claim k1"] and "A" not in results
                # a write to ``slow`` and a write to ``fast`` whose guard reads ``slow``: both wait for A
                tg.start_soon(call, "C", "s__claim", "k1")
                tg.start_soon(call, "D", "fast__use", "k1")
                await _waiting(rt, "server:slow", 3)
                assert "C" not in results and "D" not in results
                await _let_go(held)
    assert not results["A"].is_error, results["A"].content
    # each decided on what A did: C's claim is refused, D's use (refused on the store before A) is allowed
    assert results["C"].is_error and "already claimed" in results["C"].content[0].text, results["C"].content
    assert not results["D"].is_error, results["D"].content
    assert _ran(tmp_path / "slow.ran") == ["claim k1"]
    assert _ran(tmp_path / "fast.ran") == ["claim k1", "use k1"]


async def test_a_write_waits_for_its_upstream_at_most_the_bound_then_is_denied(tmp_path: Path) -> None:
    held = tmp_path / "held"
    async with _gateway(tmp_path, write_turn_seconds=0.5) as rt:
        assert rt.gateway.session_writes.shared.within == 0.5
        first: list[Any] = []

        async def claim() -> None:
            async with Client(rt.front.server, mode="auto") as c:
                first.append(await c.call_tool("s__claim", {"key": "k1"}))

        with anyio.fail_after(90):
            async with anyio.create_task_group() as tg:
                tg.start_soon(claim)
                await _arrived(held)
                async with Client(rt.front.server, mode="auto") as c:
                    for name in ("s__claim", "fast__use"):  # the same upstream; one whose guard reads it
                        r = await c.call_tool(name, {"key": "k1"})
                        said = r.content[0].text
                        assert r.is_error and "depends on has been in progress for 0.5 s" in said, said
                    assert _ran(tmp_path / "slow.ran") == [] and _ran(tmp_path / "fast.ran") == []
                    await _let_go(held)
            assert not first[0].is_error, first[0].content
            async with Client(rt.front.server, mode="auto") as c:  # then decided on what the first did
                r = await c.call_tool("s__claim", {"key": "k1"})
                assert r.is_error and "already claimed" in r.content[0].text, r.content
    assert _ran(tmp_path / "slow.ran") == ["claim k1"]


def _call(name: str, server: str, tool: str) -> ToolCall:
    return ToolCall(name=name, server=server, tool=tool, arguments={})


def test_every_spelling_of_an_upstream_is_one_turn_and_reads_widen_it() -> None:
    info = RulebaseInfo(guard_reads=[
        GuardReads(tool="a__*", reads=["a__get"], kept=False),
        GuardReads(tool="a__set", reads=["x__y__get"], kept=False),  # server "x" or "x__y": both taken
        GuardReads(tool="k__send", reads=[], kept=True),
    ])
    # the client's name is not the turn: the upstream's configured name is
    for name in ("a__put", "p_put", "put", "A__put", "a__put "):
        assert turn_keys(info, _call(name, "a", "put"), keeps=False) == ("server:a",)
    assert turn_keys(info, _call("zz", "a", "set"), keeps=False) == ("server:a", "server:x", "server:x__y")
    assert turn_keys(info, _call("k__send", "k", "send"), keeps=False) == (KEPT_TURN, "server:k")
    assert turn_keys(info, _call("b__do", "b", "do"), keeps=True) == (KEPT_TURN, "server:b")
    assert turn_keys(None, _call("b__do", "b", "do"), keeps=False) == ("server:b",)


async def test_shared_turns_are_taken_whole_or_not_at_all() -> None:
    writes = SessionWrites(0.05)
    shared = writes.shared
    assert shared is not None
    async with shared.turns(["server:b"], wait=True) as first:
        assert first
        # one of two taken is given back at once: nothing is held half, no deadlock with the holder of "b"
        async with shared.turns(["server:a", "server:b"], wait=True) as both:
            assert not both and not shared.taken("server:a")
        async with shared.turns(["server:b"], wait=False) as nested:  # a nested call is refused, not held
            assert not nested
        async with shared.turns(["server:a"], wait=False) as other:
            assert other and shared.taken("server:a")
    assert not shared._locks and not shared._users
