"""Turns at the one build slot: a principal refused because another principal's build held the slot has the
next turn, for ``fair_turn_seconds`` after that build ended; meanwhile the principal whose build it was is
refused. Without this one principal could hold the slot with builds back to back (90 minutes each) and every
other principal would be refused for ever.

The waiters are the slot holder's process's to remember (in memory, at most ``MAX_WAITERS``, the oldest
forgotten first); the builds they wait behind are read from the store, on the store's clock.
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.swarm.limits import HARD_MAX_WALL_SECONDS
from sentinel_mcp.swarm.state import TERMINAL_STATES
from sentinel_mcp.swarm.task_lock import BuildBusyError

MAX_WAITERS = 1024


class BuildTurns:
    def __init__(self) -> None:
        self._waiting: dict[str, float] = {}  # principal -> when (store clock) it was refused; oldest first

    def waits(self, principal: str, at: float) -> None:
        """``principal`` was refused at ``at`` because another principal's build held the slot."""
        self._waiting.pop(principal, None)  # re-inserted last: the dict stays oldest first
        self._waiting[principal] = at
        while len(self._waiting) > MAX_WAITERS:
            del self._waiting[next(iter(self._waiting))]

    def taken(self, principal: str) -> None:
        """``principal`` started a build: its turn is taken."""
        self._waiting.pop(principal, None)

    async def check(self, store: Any, principal: str, turn: float) -> None:
        """Raise ``BuildBusyError`` while another principal that asked for the slot during ``principal``'s
        last build has not had its turn (``turn`` seconds after that build ended; 0: turns are off)."""
        if not self._waiting or turn <= 0:
            return
        now = await store.now()
        for who, at in list(self._waiting.items()):
            if now - at > turn + HARD_MAX_WALL_SECONDS:
                del self._waiting[who]  # asked before any build that could still hold it back
        last = await store.list_tasks(1, principal)
        if not last or last[0]["state"] not in TERMINAL_STATES:
            return  # no build of its own yet, or one still running (the slot refuses it, naming its build)
        began, ended = float(last[0]["created_at"]), float(last[0]["finished_at"] or last[0]["updated_at"])
        # others that asked while (or since) this principal's last build ran, their turn not lapsed
        ahead = [max(at, ended) for who, at in self._waiting.items() if who != principal and at >= began]
        ahead = [since for since in ahead if now - since <= turn]
        if ahead:
            wait = max(1, int(min(ahead) + turn - now))
            raise BuildBusyError(
                "another caller is waiting for the build slot and has the next turn (you had the last "
                f"build); nothing was started: ask again in {wait} s, or when its build has finished"
            )
