"""Requests an upstream pushed during a call and Sentinel refused (a kind its ``relays`` setting does not
list, or past ``MAX_PUSHES_WAITING`` waiting at once), in the audit log: who the call was for, which upstream,
what kind, why (``origin`` the call's, ``tool`` the call's, ``outcome`` "push_refused", ``arguments`` the kind
and how many the row stands for).

Bounded: an upstream flooding pushes must not flood the disk. Per upstream, within a window of ``WINDOW``
seconds the first ``BURST`` refusals are written one by one (each before the upstream hears of it); the rest
are counted by (principal, kind, cause) and written as one row each when the window ends (at that upstream's
next refusal after it, or when the gateway stops). So one upstream adds at most ``BURST`` rows plus one per
(principal, kind, cause) it refused in a window; the causes are a few (``relayed_roots.NARROWED`` among
them: roots left out of an answer), the kinds three, and the principals counted per window at most
``MAX_KEYS`` (the rest are summed under no principal).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from sentinel_mcp.core.audit_entry import AuditEntry, new_decision_id
from sentinel_mcp.core.caller_link import CallOf

log = logging.getLogger(__name__)

BURST = 20
WINDOW = 60.0
MAX_KEYS = 64  # (principal, kind, cause) counted per upstream and window
OUTCOME = "push_refused"


@dataclass(slots=True)
class _Window:
    start: float
    written: int = 0
    counted: dict[tuple[str | None, str, str], int] = field(default_factory=dict)
    # one call each (principal, kind, cause) stands for in the summary: its session, tool and origin
    calls: dict[tuple[str | None, str, str], CallOf | None] = field(default_factory=dict)


class PushRefusals:
    def __init__(
        self, write: Callable[[AuditEntry], Awaitable[Any]], *, burst: int = BURST, window: float = WINDOW
    ) -> None:
        self.write = write
        self.burst, self.window = burst, window
        self._windows: dict[str, _Window] = {}
        self.total = 0  # refused pushes seen, since the start
        self.summarized = 0  # of which were written in a summary row

    async def record(self, upstream: str, kind: str, cause: str, why: str, call: CallOf | None) -> None:
        """One refused push (``cause``: "not_permitted", "too_many_waiting", "too_many_questions",
        "too_large", ``sampling_bounds``, or "unattributed": tied to no call it could be proved to belong to,
        ``call`` then None unless it named one that has ended);
        written at once while the upstream's window has room, else counted."""
        self.total += 1
        now = time.monotonic()
        win = self._windows.get(upstream)
        if win is None or now - win.start >= self.window:
            ended, win = win, _Window(now)
            self._windows[upstream] = win
            if ended is not None:
                await self._summarize(upstream, ended)
        if win.written < self.burst:
            win.written += 1
            await self._persist(self._entry(upstream, kind, cause, why, call, 1))
            return
        key = (call.principal if call is not None else None, kind, cause)
        if key not in win.counted and len(win.counted) >= MAX_KEYS:
            key = (None, kind, cause)
        win.counted[key] = win.counted.get(key, 0) + 1
        win.calls.setdefault(key, call)

    async def flush(self) -> None:
        """Every count not yet written (the gateway stops)."""
        for upstream, win in list(self._windows.items()):
            await self._summarize(upstream, win)
        self._windows.clear()

    async def _summarize(self, upstream: str, win: _Window) -> None:
        counted, calls = win.counted, win.calls
        win.counted, win.calls = {}, {}
        for (principal, kind, cause), n in counted.items():
            self.summarized += n
            call = calls.get((principal, kind, cause))
            if call is not None and call.principal != principal:
                call = None  # summed under no principal: no one call of theirs stands for it
            why = (f"{n} more {kind} requests refused ({cause.replace('_', ' ')}) within {self.window:g} s "
                   "(not written one by one)")
            await self._persist(self._entry(upstream, kind, cause, why, call, n))

    def _entry(
        self, upstream: str, kind: str, cause: str, why: str, call: CallOf | None, n: int
    ) -> AuditEntry:
        return AuditEntry(
            session=call.session if call is not None else "upstream",
            tool=call.tool if call is not None else f"{upstream} (a pushed request)",
            decision="deny",
            outcome=OUTCOME,
            client=call.client if call is not None else None,
            origin=call.origin if call is not None else "client",
            upstream=upstream,
            principal=call.principal if call is not None else None,
            reason=why,
            decision_id=new_decision_id(),  # a row of its own (the call's is in ``arguments``)
            arguments={"push": kind, "cause": cause, "refused": n,
                       "call": call.decision_id if call is not None else None},
        )

    async def _persist(self, entry: AuditEntry) -> None:
        """A refusal that cannot be written is logged: the upstream is refused either way."""
        try:
            await self.write(entry)
        except Exception as e:  # noqa: BLE001 - StorageError and anything else: never into the push's path
            log.warning("refused push not audited (%s): %s from %s", e, entry.reason, entry.upstream)
