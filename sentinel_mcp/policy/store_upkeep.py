"""The guard's background upkeep of its facts: expired facts purged every ``purge_interval`` seconds, and on a
store of this process (SQLite) the operator's clears of kept facts followed every second
(``Knowledge.follow_clears``). A failed round is logged and the next one tries again."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from sentinel_mcp.policy.agent_answer_bound import forget_owners
from sentinel_mcp.policy.knowledge import Knowledge

log = logging.getLogger(__name__)

FOLLOW_CLEARS_EVERY = 1.0  # seconds between two looks at the kept facts' clears (one indexed read)


async def upkeep(knowledge: Knowledge, search: Any, purge_interval: float) -> None:
    follow = not knowledge.store.shared
    tick = min(purge_interval, FOLLOW_CLEARS_EVERY) if follow else purge_interval
    next_purge = time.monotonic() + purge_interval
    while True:
        await asyncio.sleep(tick)
        if follow:
            try:
                await knowledge.follow_clears()
            except Exception:  # noqa: BLE001
                log.exception("kept facts' clears")
        if time.monotonic() < next_purge:
            continue
        next_purge = time.monotonic() + purge_interval
        try:
            await knowledge.purge()
            await forget_owners(knowledge.store)  # conversations that hold no agent answer any more
            if search.index is not None:
                await search.index.purge()  # expired memories
        except Exception:  # noqa: BLE001
            log.exception("fact purge")
