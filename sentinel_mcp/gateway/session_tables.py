"""Shares of the tables the gateway keeps per downstream session (its HTTP session owners, resource
subscriptions, ``list_changed`` listeners).

Each table holds an entry only while its session lives (the session's end removes it), and is bounded twice:
a principal past its own share is refused a new entry, and the table past its total refuses everyone's new
entries. Nothing is ever evicted to make room, so one principal's churn or flood can cost only that principal
(or, at the total, new entries), never another principal's live session.

Caps can be lowered for a deployment (or a test) with ``SENTINEL_CAP_<NAME>`` / ``SENTINEL_CAP_<NAME>_TOTAL``.
"""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from typing import Any, Callable

from sentinel_mcp.core.deployment_caps import cap

log = logging.getLogger(__name__)

_KEY = "sentinel/connection-key"
_ENDS = "sentinel/connection-ends"
_numbers = itertools.count(1)


class Shares:
    """How many entries each principal holds in one table, against its share and the table's total."""

    def __init__(self, name: str, what: str, per_principal: int, total: int) -> None:
        """``name``: its caps' environment name; ``what``: its entries, as a refusal names them."""
        self.what = what
        self.per_principal = cap(name, per_principal)
        self.total = cap(f"{name}_TOTAL", total)
        self._held: Counter[str] = Counter()
        self._count = 0

    def refusal(self, who: str) -> str | None:
        """Why ``who`` may not add an entry now (None: it may)."""
        if self._held[who] >= self.per_principal:
            return f"too many {self.what} for this caller"
        if self._count >= self.total:
            return f"too many {self.what}"
        return None

    def take(self, who: str) -> str | None:
        """Count one entry for ``who``; or, refused, why (nothing counted)."""
        refused = self.refusal(who)
        if refused is None:
            self.count(who)
        return refused

    def count(self, who: str) -> None:
        """Count one entry for ``who`` unchecked (one admitted by ``refusal`` before an await)."""
        self._held[who] += 1
        self._count += 1

    def give_back(self, who: str) -> None:
        if self._held[who] <= 0:
            return
        self._held[who] -= 1
        if not self._held[who]:
            del self._held[who]
        self._count -= 1

    def held(self, who: str | None = None) -> int:
        return self._count if who is None else self._held[who]


def connection_key(connection: Any) -> int:
    """A number for a downstream connection, never reused while the process runs (``id()`` of an object
    is reused once the object is freed: a later connection would inherit a dead one's entries)."""
    key = connection.state.get(_KEY)
    if key is None:
        key = connection.state[_KEY] = next(_numbers)
    return int(key)


def on_end(connection: Any, name: str, end: Callable[[], Any]) -> None:
    """Call ``end`` once when ``connection`` closes (however it ends: DELETE, idle expiry, a closed
    transport); ``name`` keeps one registration per table."""
    ends: set[str] = connection.state.setdefault(_ENDS, set())
    if name in ends:
        return
    ends.add(name)

    async def ended() -> None:
        try:
            result = end()
            if hasattr(result, "__await__"):
                await result
        except Exception:  # noqa: BLE001 - a table's cleanup must not stop the others'
            log.exception("cleaning up %s at a connection's end", name)

    connection.exit_stack.push_async_callback(ended)
