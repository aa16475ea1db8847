"""The tools the confirmations this process has seen name: what lets ``PolicyGuard.observe`` skip its look-up.

After every call the guard spends the confirmation of that exact call, if one is held (one confirmation, one
call): in the engine's mirror of the session when the session is loaded, else in the store. Most calls are of
tools nobody was ever asked to confirm, and the look-up cost every call a round trip to the store's thread
(issue 21). A confirmation is a fact ``'$confirmed'(Tool, Digest, Version, Shown, Answer)``; on a SQLite store
every fact this process writes goes through ``FactStore.add`` and every fact an engine mirror holds was read
through ``FactStore.valid`` or written by this process, so noting the tools of the confirmations passing
through those two (before a write) gives every tool that:

- a loaded session's mirror may hold a confirmation of (what it was loaded with, and what was added since);
- the store may hold one of in a session only this process writes (minted here: ``PolicyGuard.private``).

The set only grows (a spent or expired confirmation leaves its tool in it: a look-up too many, never one too
few). A server store that replicas share is written by all of them, and a replica's mirror follows the others'
changes: there, and past ``capacity`` tools, or for a confirmation that does not name its tool by a string,
every tool may be named (the guard looks up as before).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

CONFIRMED = "$confirmed"
CAPACITY = 4096


class ConfirmedTools:
    def __init__(self, *, knowable: bool, capacity: int = CAPACITY) -> None:
        self.knowable = knowable
        self.capacity = capacity
        self._tools: set[str] = set()
        self.gave_up = False  # too many tools, or one named otherwise than by a string: every tool may be

    def note(self, facts: Iterable[Any]) -> None:
        """``facts`` (``Fact``) about to be written, or just read: the tools their confirmations name (the
        source tool and the fact's first argument, the two ways a confirmation is looked up)."""
        for f in facts:
            if f.predicate == CONFIRMED:
                self.note_confirmation(f.args, f.source_tool)

    def note_confirmation(self, args: list[Any], source_tool: Any) -> None:
        """A confirmation's arguments and source tool, about to be written or just read."""
        first = args[0] if args else None
        if not isinstance(first, str) or not isinstance(source_tool, (str, type(None))):
            self.gave_up = True  # never stored so by Sentinel: look up every call from now on
            return
        self._tools.add(first)
        if source_tool is not None:
            self._tools.add(source_tool)
        if len(self._tools) > self.capacity:
            self.gave_up = True

    def may_name(self, tool: str) -> bool:
        """False only when no confirmation this process wrote or read names ``tool`` (and that is known)."""
        return not self.knowable or self.gave_up or tool in self._tools
