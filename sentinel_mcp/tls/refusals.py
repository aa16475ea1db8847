"""Refused certificates go to the audit log (``origin`` "tls"), bounded: a scanner hammering the port cannot
flood the disk. Within a window at most ``burst`` refusals are written one by one; the rest are counted and
written as one summary line when the window ends (a timer: a burst followed by silence is counted too) or when
the gateway stops (``flush``).

A refusal before the audit log opens (the gateway still starting) is held, in order, and written when it opens
(``opened``): at most ``burst`` held, the rest counted into one row. One after it closed (``closed``) is said
in the log, bounded as the audit is, never written into a closed store."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Callable

from sentinel_mcp.core.audit_entry import AuditEntry

log = logging.getLogger(__name__)

HANDSHAKE = "tls/handshake"  # the audit "tool" of a refusal in the TLS handshake
REQUEST = "tls/client-certificate"  # ... and of a certificate refused when a request named no principal


class RefusalLog:
    def __init__(self, audit: Callable[[], Any], *, burst: int = 30, window: float = 60.0) -> None:
        """``audit()`` returns the running AuditLog, or None while the gateway is still starting."""
        self.audit = audit
        self.burst, self.window = burst, window
        self._window_start = time.monotonic()
        self._written = 0
        self.suppressed = 0
        self.total = 0
        self._pending: set[asyncio.Task[None]] = set()  # writes under way (kept so they are not collected)
        self._window_end: asyncio.TimerHandle | None = None  # writes the count when its window ends
        self._held: list[AuditEntry] = []  # written before the audit opened: written when it does
        self._held_dropped = 0  # ... past the bound on those: counted
        self._closed = False

    def record(self, peer: str | None, reason: str, *, stage: str = HANDSHAKE,
               certificate: dict[str, Any] | None = None, principal: str | None = None) -> None:
        self.total += 1
        self._roll(time.monotonic())
        if self._written >= self.burst:
            self.suppressed += 1
            self._count_at_window_end()
            return
        self._written += 1
        self._write(
            AuditEntry(
                session="tls",
                principal=principal,
                client=peer,
                origin="tls",
                tool=stage,
                decision="deny",
                reason=reason,
                arguments=certificate or None,
                outcome="denied",
            )
        )

    def _roll(self, now: float) -> None:
        """A window that has ended: its count written, a new one begun."""
        if now - self._window_start >= self.window:
            self._summarize()
            self._window_start, self._written = now, 0

    def _count_at_window_end(self) -> None:
        """The count reaches the audit when this window ends even if nothing more is refused."""
        if self._window_end is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop to wait on: the next refusal or ``flush`` writes it
        delay = max(0.0, self._window_start + self.window - time.monotonic())
        self._window_end = loop.call_later(delay, self._window_ended)

    def _window_ended(self) -> None:
        self._window_end = None
        self._roll(time.monotonic())
        if self.suppressed:  # (the clock read a hair early): wait for the rest of the window
            self._count_at_window_end()

    async def flush(self) -> None:
        """The count not yet written, written now, and every write under way awaited (the gateway stops)."""
        if self._window_end is not None:
            self._window_end.cancel()
            self._window_end = None
        self._summarize()
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    def _summarize(self) -> None:
        if self.suppressed:
            self._write(
                AuditEntry(
                    session="tls",
                    origin="tls",
                    tool=HANDSHAKE,
                    decision="deny",
                    outcome="denied",
                    reason=f"{self.suppressed} more certificate refusals in {self.window:g} s "
                    "(not written one by one)",
                )
            )
            self.suppressed = 0

    async def opened(self) -> None:
        """The audit log is open: what was held while it was not is written now, in order, with the count of
        this window's refusals so far (and awaited)."""
        if self.audit() is None or self._closed:
            return
        self._release_held()
        self._summarize()
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    def closed(self) -> None:
        """The audit log is closing (``flush`` first): later refusals are said in the log only."""
        self._closed = True

    def _release_held(self) -> None:
        held, self._held = self._held, []
        dropped, self._held_dropped = self._held_dropped, 0
        if dropped:
            held.append(AuditEntry(
                session="tls", origin="tls", tool=HANDSHAKE, decision="deny", outcome="denied",
                reason=f"{dropped} more certificate refusals before the audit log opened (not written one "
                "by one)"))
        for entry in held:
            self._write(entry)

    def _write(self, entry: AuditEntry) -> None:
        """Called from the handshake and from resolvers (sync); the audit log writes durably (async), so the
        write is its own task on the running loop. A refusal that cannot be written is logged: the caller is
        refused either way."""
        if self._closed:
            log.warning("TLS refusal not audited (the audit log is closed): %s from %s", entry.reason,
                        entry.client)
            return
        audit = self.audit()
        if audit is None:  # starting: held for the audit (bounded), written when it opens
            if len(self._held) < self.burst:
                self._held.append(entry)
            else:
                self._held_dropped += 1
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            log.warning("TLS refusal not audited (no event loop): %s from %s", entry.reason, entry.client)
            return
        if self._held or self._held_dropped:  # opened since: what was held goes first
            self._release_held()
        task = loop.create_task(self._persist(audit, entry))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    @staticmethod
    async def _persist(audit: Any, entry: AuditEntry) -> None:
        try:
            await audit.write(entry)
        except Exception as e:  # StorageError and anything else: never into the connection's path
            log.warning("TLS refusal not audited (%s): %s from %s", e, entry.reason, entry.client)
