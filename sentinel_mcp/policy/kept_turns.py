"""The turn of the writes that establish kept facts (``kept_effects.py``), across every process deciding on
the same facts. A base of ``PolicyGuard``, which sets the attributes named here.

Within a process the gateway's ``session_writes.KEPT_TURN`` already lets one such write be decided, forwarded
and recorded at a time. Replicas of a server store each have their own: two could each decide a certificate
for the same cancelled flight before either recorded it, and both were sent. On a server store the turn is
also the cluster's (``storage/server_turn.py``: an advisory lock the server ends with the holder's session),
taken before deciding and held until the write's outcome is recorded. A turn that cannot be had within
``kept_turn_seconds``, or at all (the server is down), denies the call. A store of this process only (SQLite)
needs no more than the gateway's own turn.
"""

from __future__ import annotations

import contextlib
from typing import AsyncContextManager, AsyncIterator

from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.fact_store import FactStore
from sentinel_mcp.policy.rulebase import RulebaseHolder
from sentinel_mcp.storage.location import ServerLocation
from sentinel_mcp.storage.server_turn import server_turn

KEPT_TURN_SECONDS = 30.0  # how long a kept write waits for another replica's to be recorded, then is denied
_TURN_NAME = "sentinel.kept-facts"  # one turn per database: every kept write of the cluster


class KeptTurns:
    rulebases: RulebaseHolder
    store: FactStore
    kept_turn_seconds: float = KEPT_TURN_SECONDS

    def keeps_facts(self, call: ToolCall) -> bool:
        rb = self.rulebases.active
        return rb is not None and rb.info.keeps(call.identity)

    def kept_turn(self, *, wait: bool) -> AsyncContextManager[str | None]:
        if not self.store.shared:
            return contextlib.nullcontext(None)  # one process's store: the gateway's own turn is the turn
        return self._cluster_turn(wait)

    @contextlib.asynccontextmanager
    async def _cluster_turn(self, wait: bool) -> AsyncIterator[str | None]:
        location = getattr(self.store.database, "location", None)
        if not isinstance(location, ServerLocation):  # closed, or not a server: no turn, no call
            yield "the cluster's turn for such changes could not be taken: the fact store is not open"
            return
        async with server_turn(location, _TURN_NAME, wait=self.kept_turn_seconds if wait else 0.0) as refused:
            if refused is None:
                yield None
            elif refused.busy:
                yield f"another such change is in progress on another replica ({refused.why}); call again"
            else:
                yield f"the cluster's turn for such changes could not be taken: {refused.why}"
