"""When a count of repeated events is worth a log line: said, not flooded."""

from __future__ import annotations


def worth_saying(before: int, now: int) -> bool:
    """Whether a count of things dropped or refused, gone from ``before`` to ``now``, passed one worth a log
    line: the 1st, 10th, 100th and every 1,000th."""
    return any(before < mark <= now for mark in (1, 10, 100)) or before // 1000 < now // 1000
