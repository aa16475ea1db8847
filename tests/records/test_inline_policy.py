"""When commits on the caller's thread are on (``storage/inline_policy.py``): decisions fed commit durations
and a clock, no real time. An outlier keeps them on; a slow disk or a stall turns them off; they come back
soon and the off period doubles while the disk stays slow; a whole window of fast commits resets it."""

from __future__ import annotations

from sentinel_mcp.storage.inline_policy import (
    OFF_FIRST_S,
    OFF_MAX_S,
    SLOW_OF_WINDOW,
    SLOW_S,
    STALL_S,
    WINDOW,
    InlinePolicy,
)

FAST = SLOW_S / 10
SLOW = (SLOW_S + STALL_S) / 2  # slow, not a stall
STALLED = STALL_S * 2


def feed(policy: InlinePolicy, durations: list[float], now: float = 0.0) -> list[float]:
    """The off periods each commit caused, commits 1 ms apart (from ``now``)."""
    return [policy.record(took, now + i * 0.001) for i, took in enumerate(durations)]


def test_fast_commits_and_lone_outliers_keep_commits_inline() -> None:
    policy = InlinePolicy()
    # an outlier every WINDOW commits never makes SLOW_OF_WINDOW of a window (the rule before: 30 s off)
    durations = ([FAST] * (WINDOW - 1) + [SLOW]) * 20
    assert set(feed(policy, durations)) == {0.0}
    assert policy.allows(1.0) and policy.trips == 0


def test_slow_commits_piling_up_in_a_window_turn_them_off() -> None:
    policy = InlinePolicy()
    durations = [SLOW, FAST, FAST] * SLOW_OF_WINDOW
    offs = feed(policy, durations, now=10.0)
    assert offs[:-3] == [0.0] * (len(durations) - 3)
    tripped_at = 10.0 + (len(durations) - 3) * 0.001
    assert offs[-3] == OFF_FIRST_S and set(offs[-2:]) == {0.0}
    assert not policy.allows(tripped_at + OFF_FIRST_S - 0.001)
    assert policy.allows(tripped_at + OFF_FIRST_S)


def test_one_stalled_commit_turns_them_off_at_once() -> None:
    policy = InlinePolicy()
    assert feed(policy, [FAST] * 5 + [STALLED]) == [0.0] * 5 + [OFF_FIRST_S]
    assert not policy.allows(0.005 + OFF_FIRST_S / 2) and policy.trips == 1


def test_a_disk_that_stays_slow_doubles_the_off_period_up_to_the_cap() -> None:
    policy = InlinePolicy()
    now, offs = 0.0, []
    for _ in range(12):  # each probe after the off period is slow again
        off = policy.record(STALLED, now)
        offs.append(off)
        assert not policy.allows(now + off - 0.001)
        now += off
        assert policy.allows(now)
    expected = [min(OFF_FIRST_S * 2 ** i, OFF_MAX_S) for i in range(12)]
    assert offs == expected and offs[-1] == OFF_MAX_S
    # while probing, a slow commit (not a stall, and alone in its window) is enough to turn them off again
    policy = InlinePolicy()
    policy.record(STALLED, 0.0)
    assert policy.record(SLOW, OFF_FIRST_S) == OFF_FIRST_S * 2


def test_a_whole_window_of_fast_commits_starts_the_back_off_again() -> None:
    policy = InlinePolicy()
    assert policy.record(STALLED, 0.0) == OFF_FIRST_S
    assert policy.record(STALLED, 1.0) == OFF_FIRST_S * 2
    feed(policy, [FAST] * (WINDOW - 1), now=3.0)  # one short of a window: still probing
    assert policy.record(SLOW, 4.0) == OFF_FIRST_S * 4
    feed(policy, [FAST] * WINDOW, now=10.0)  # a whole window fast: recovered
    assert policy.record(SLOW, 11.0) == 0.0  # an outlier again, no longer enough
    assert policy.record(STALLED, 11.1) == OFF_FIRST_S
