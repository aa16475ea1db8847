"""A decision's wall-clock budget kept by a watching thread (``decision_watch.pl``), no alarm per decision.

The watcher polls while decisions run and sleeps for good after a second without one: a decision that comes
after that sleep must wake it, or nothing would stop it (one msort/2 of a million is one inference of ~0.1 s,
so the inference limit does not). A signal that reaches a thread after its decision ended changes nothing.
Real SWI-Prolog, on the caller's thread and on the engine's.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from sentinel_mcp.config import PolicySettings
from sentinel_mcp.core.decision import Allow, Deny, ToolCall
from sentinel_mcp.policy.engine import EngineError
from tests.policy.policy_rig import make_guard

pytestmark = pytest.mark.timeout(180)

SPIN = r"""
spin(_, 0) :- !.
spin(L, K) :- msort(L, _), K1 is K - 1, spin(L, K1).
guard('t__spin', [n = N, pad = _], (length(L, N), spin(L, 1000000))).
guard('t__ok', [n = N, pad = _], (integer(N), N =< 10)).
"""


def call(name: str, args: dict) -> ToolCall:
    server, _, tool = name.partition("__")
    return ToolCall(name=name, server=server, tool=tool, arguments=args, session_id="s1")


async def watcher_asleep(g, seconds: float = 10.0) -> bool:
    """Whether the watcher marked itself asleep within ``seconds`` (it does after a second of no decision)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            await g.engine.goal("get_flag('$sn_watch', 0)")  # fails (an EngineError) unless asleep
            return True
        except EngineError:
            await asyncio.sleep(0.05)
    return False


@pytest.mark.parametrize("pad", [0, 6000], ids=["callers-thread", "engine-thread"])
async def test_a_decision_after_the_watcher_slept_is_still_bounded_in_time(tmp_path: Path, pad: int):
    rb = tmp_path / "spin.pl"
    rb.write_text(SPIN)
    g = await make_guard(None, tmp_path / "facts.db", files=[rb], seeds={},
                         settings=PolicySettings(guard_timeout=1.0))  # each spin waits it out
    try:
        assert g.load_error is None, g.load_error
        for _ in range(3):  # the watcher polls while decisions come, then sleeps
            assert isinstance(await g.decide(call("t__ok", {"n": 3, "pad": ""})), Allow)
            assert await watcher_asleep(g)
            t0 = time.monotonic()
            d = await g.decide(call("t__spin", {"n": 1_000_000, "pad": "p" * pad}))
            assert isinstance(d, Deny) and "time budget" in d.reason, d
            assert time.monotonic() - t0 < 60
        assert isinstance(await g.decide(call("t__ok", {"n": 3, "pad": ""})), Allow)
    finally:
        await g.close()


async def test_a_late_signal_stops_nothing(tmp_path: Path):
    """The watcher's signal run where no decision is overdue (the decision over, or another thread's, or one
    still in its budget) does nothing; the decisions after it are answered."""
    rb = tmp_path / "spin.pl"
    rb.write_text(SPIN)
    g = await make_guard(None, tmp_path / "facts.db", files=[rb], seeds={})
    try:
        assert isinstance(await g.decide(call("t__ok", {"n": 3, "pad": ""})), Allow)
        await g.engine.goal("sentinel_core:sn_decision_overdue")  # no decision running
        # a deadline long past, but of another thread's decision
        await g.engine.goal("setup_call_cleanup(( get_flag('$sn_deadline', D), get_flag('$sn_decider', I), "
                            "set_flag('$sn_deadline', 1.0), set_flag('$sn_decider', -1) ), "
                            "sentinel_core:sn_decision_overdue, "
                            "( set_flag('$sn_deadline', D), set_flag('$sn_decider', I) ))")
        # this thread's own decision, still within its budget
        await g.engine.goal("sentinel_core:within_budget(30, sentinel_core:sn_decision_overdue)")
        # and past it: the signal stops it
        with pytest.raises(EngineError, match="time_limit_exceeded"):
            await g.engine.goal("sentinel_core:within_budget(0.01, ( sleep(0.05), "
                                "sentinel_core:sn_decision_overdue ))")
        for _ in range(20):
            assert isinstance(await g.decide(call("t__ok", {"n": 3, "pad": ""})), Allow)
            assert isinstance(await g.decide(call("t__ok", {"n": 11, "pad": "p" * 6000})), Deny)
    finally:
        await g.close()
