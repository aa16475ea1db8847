"""A decision's wall-clock budget is kept by one watchdog thread, not an alarm per decision
(``policy/prolog/decision_budget.pl``): a decision past its deadline is interrupted, an interrupt that arrives
after its decision ended (or during the next) does nothing, the earlier deadline of two nested ones holds,
and with the watchdog gone the budget still holds (it is started again, or the alarm is used)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sentinel_mcp.config import PolicySettings
from sentinel_mcp.core.decision import Allow, Deny, ToolCall
from tests.policy.policy_rig import make_guard

pytestmark = pytest.mark.timeout(120)

RULES = r"""
spin(_, 0) :- !.
spin(L, K) :- msort(L, _), K1 is K - 1, spin(L, K1).
guard('t__spin', [n = N], (length(L, N), spin(L, 150))).
guard('t__ok', [n = N], (integer(N), N =< 10)).
"""
# both spins take seconds, far past the budgets here, but end: a broken interrupt fails a test, never hangs it
SPIN = "( numlist(1, 200000, L), between(1, 1000, _), msort(L, _), fail ; true )"


def call(name: str, n: int) -> ToolCall:
    server, _, tool = name.partition("__")
    return ToolCall(name=name, server=server, tool=tool, arguments={"n": n}, session_id="s1")


async def outcome(g, goal: str) -> str:
    """What a goal on the engine's thread came to: ok, or the exception it threw (as text)."""
    text = (
        f"catch(( {goal} -> R = ok ; R = failed ), E, ( E == time_limit_exceeded -> R = time_limit "
        "; term_to_atom(E, R) ))"
    )
    rows = await g.engine.run(lambda p: list(p.query(text, maxresult=1)))
    return str(rows[0]["R"])


@pytest.fixture
async def guard(tmp_path: Path):
    rb = tmp_path / "budget.pl"
    rb.write_text(RULES)
    g = await make_guard(None, tmp_path / "facts.db", files=[rb], seeds={},
                         settings=PolicySettings(guard_timeout=1.0))
    await g.engine.goal("sentinel_core:sn_guard_seconds(1.0)")
    assert g.load_error is None, g.load_error
    yield g
    await g.close()


async def watchdog_running(g) -> bool:
    return await outcome(g, "sentinel_core:watchdog_running") == "ok"


async def until_watched(g) -> None:
    """A decision starts the watchdog (that one is bounded by an alarm); it is trusted once it has looked."""
    assert isinstance(await g.decide(call("t__ok", 3)), Allow)
    for _ in range(200):  # bounded by count: it looks every 10 ms
        if await watchdog_running(g):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the decision budget's watchdog never started")


async def test_a_decision_past_its_budget_is_interrupted_by_the_watchdog(guard) -> None:
    await until_watched(guard)  # from now on no alarm per decision
    d = await guard.decide(call("t__spin", 1_000_000))
    assert isinstance(d, Deny) and "time budget" in d.reason, d
    assert await watchdog_running(guard)  # it was the watchdog's interrupt, not an alarm's
    assert isinstance(await guard.decide(call("t__ok", 3)), Allow)  # nothing left pending for the next


async def test_budgets_nest_and_a_late_interrupt_does_nothing(guard) -> None:
    await until_watched(guard)
    wb = "sentinel_core:within_budget"
    assert await outcome(guard, f"{wb}(0.2, ({SPIN}))") == "time_limit"
    # nested: the earlier deadline holds, whichever is outside
    assert await outcome(guard, f"{wb}(0.2, {wb}(60, ({SPIN})))") == "time_limit"
    assert await outcome(guard, f"{wb}(60, {wb}(0.2, ({SPIN})))") == "time_limit"
    # an interrupt after the decision ended, or during one whose deadline is ahead: nothing happens
    assert await outcome(guard, f"{wb}(5, true), sentinel_core:sn_overdue") == "ok"
    assert await outcome(guard, f"{wb}(60, sentinel_core:sn_overdue)") == "ok"
    assert await outcome(guard, "sentinel_core:sn_overdue") == "ok"
    # a budget that ran out inside a nested one is restored to the outer one's after it
    assert await outcome(guard, f"{wb}(60, ( {wb}(5, true), sentinel_core:sn_overdue ))") == "ok"
    # the goal's own outcome is kept: failure, exceptions, the first solution only
    assert await outcome(guard, f"{wb}(5, fail)") == "failed"
    assert await outcome(guard, f"{wb}(5, throw(mine))") == "mine"
    assert await outcome(guard, f"findall(X, {wb}(5, member(X, [a, b])), [a])") == "ok"


@pytest.mark.parametrize("how", ["abort", "exit"])
async def test_without_its_watchdog_the_budget_still_holds(guard, how: str) -> None:
    await until_watched(guard)
    stop = "abort" if how == "abort" else "thread_exit(stopped)"
    assert await outcome(guard, f"thread_signal(sn_deadline_watch, {stop})") == "ok"
    for _ in range(100):  # bounded: the watchdog's thread ends when it next wakes
        if not await watchdog_running(guard):
            break
        await asyncio.sleep(0.02)
    d = await guard.decide(call("t__spin", 1_000_000))
    assert isinstance(d, Deny) and "time budget" in d.reason, d
    assert isinstance(await guard.decide(call("t__ok", 3)), Allow)


async def test_when_no_watchdog_can_start_the_alarm_keeps_the_budget(guard) -> None:
    """A watchdog that cannot be started (its name taken by a live thread that never looks): every decision
    falls back to call_with_time_limit/2, and is still bounded."""
    # the watchdog stopped, and its name taken by a thread that waits and never watches
    await outcome(guard, "thread_signal(sn_deadline_watch, abort)")
    taken = "thread_create(thread_get_message(_), _, [alias(sn_deadline_watch)])"
    for _ in range(200):  # bounded: the name is free once the stopped watchdog has ended
        if await outcome(guard, taken) == "ok":
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("the watchdog's name never came free")
    try:
        assert await outcome(guard, "sentinel_core:watchdog_running") == "failed"
        d = await guard.decide(call("t__spin", 1_000_000))
        assert isinstance(d, Deny) and "time budget" in d.reason, d
    finally:
        release = "thread_send_message(sn_deadline_watch, stop), thread_join(sn_deadline_watch, _)"
        await outcome(guard, release)
