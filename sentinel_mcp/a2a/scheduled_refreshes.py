"""zeroconf's browser schedules a refresh query for every instance name it has seen announced (at 80% of its
PTR record's TTL), and drops the schedule only when it is told the record expired or was removed. Its cache is
bounded (the record closest to expiring is dropped when full) but does not tell the browser what it dropped:
a flood of distinct names grew the schedule (an entry per name, in a dict and a heap) for as long as the
flood's TTLs, which the announcer chooses (measured: 3x10^5 names, +58 MB). ``prune`` drops the refreshes of
names whose PTR record is no longer cached (nothing to refresh: announced again, a name is heard anew);
``PeerBrowser`` runs it every ``PRUNE_EVERY`` names heard, so the schedule stays within the cache's bound and
that many more. It reads the scheduler's own tables (public attributes of zeroconf's compiled class: a
release that renames them fails the test of this bound, ``tests/a2a/test_browse_schedule_bound.py``)."""

from __future__ import annotations

from heapq import heapify
from typing import Any

from sentinel_mcp.a2a.discovery import SERVICE_TYPE

PRUNE_EVERY = 512  # names heard between prunes (each prune reads every scheduled refresh once)


def prune(browser: Any, cache: Any) -> None:
    """Drop ``browser``'s scheduled refreshes of instance names whose PTR record ``cache`` no longer holds."""
    from zeroconf import const

    scheduler = browser.query_scheduler
    cached = {r.alias for r in cache.async_all_by_details(SERVICE_TYPE, const._TYPE_PTR, const._CLASS_IN)}
    by_alias: dict[str, Any] = scheduler._next_scheduled_for_alias
    for alias in [a for a in by_alias if a not in cached]:
        by_alias.pop(alias).cancelled = True
    heap: list[Any] = scheduler._query_heap
    heap[:] = [query for query in heap if not query.cancelled]  # (in place: the scheduler holds this list)
    heapify(heap)
