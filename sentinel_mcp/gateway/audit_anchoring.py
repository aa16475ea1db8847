"""A running gateway's anchoring (``audit_anchor.py``): its chain's committed head appended to the anchor at
start (0 rows, before the first call), then at most every ``ANCHOR_EVERY`` seconds while the chain moves, and
at a clean stop. It runs beside the calls (a task that reads the head, a worker thread that appends and
fsyncs): a call's path gains nothing, and the anchor costs at most one fsync per interval per gateway.
The first gateway to anchor a data dir adopts every chain already there as it finds it.

An anchor that cannot be written while the gateway runs is one of the records the calls rely on, as at start
(where it stops the start): its ``health`` degrades, the gateway's records gate (``call_record.RecordsGate``)
refuses every call meanwhile and ``/healthz`` names it; the next append that works (the loop's, or the gate's
``probe``) lets calls through again, and that anchor covers the rows written before the failure."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

from sentinel_mcp.gateway.audit import AuditLog, audit_files
from sentinel_mcp.gateway.audit_anchor import ANCHOR_EVERY, AnchorError, AnchorLog, Head
from sentinel_mcp.gateway.audit_schema import GENESIS
from sentinel_mcp.storage import StorageError
from sentinel_mcp.storage.health import StoreHealth

log = logging.getLogger(__name__)


class Anchoring:
    def __init__(
        self, anchor: AnchorLog, audit: AuditLog, store_path: Path, every: float | None = None
    ) -> None:
        self.anchor, self.audit = anchor, audit
        self.every = ANCHOR_EVERY if every is None else every
        self.store_path = Path(store_path)
        self.place = Path(audit.path).relative_to(self.store_path.parent).as_posix()
        self._key: bytes | None = None
        self._last: object = None  # the chain's hash when it was last anchored
        self.problem: str | None = None  # what start-up should report (chains adopted by a new anchor)
        # as a store's health: the records gate refuses calls while the anchor cannot be written
        self.name = "audit anchor"
        self.health = StoreHealth("audit-anchor")
        self._appending = asyncio.Lock()  # the loop's append and the gate's probe, one at a time

    async def start(self, crashed: list[Path] | None = None) -> None:
        """The key (made on first start) and this chain's first anchor; raises ``AnchorError``. ``crashed``:
        instances that ended without a clean stop (``instances.crashed_instances``), whose heads are anchored
        now (``settled``) so that their rows after their own last anchor are covered from here on."""
        self._key = await asyncio.to_thread(self.anchor.open_for_writing)
        self.audit.keep_lost = self._keep_lost
        settled = await asyncio.to_thread(self._heads, [d / self.store_path.name for d in crashed or []])
        adopted = await self._append("start", [("settled", h) for h in settled])
        if adopted:  # trusted as found: right for a data dir from before anchoring, a warning otherwise
            self.problem = (
                f"audit anchor: a new anchor in {self.anchor.dir} adopted {adopted} chain(s) already in the "
                "data dir as they are now; if this data dir had an anchor elsewhere, sentinel.audit_anchor "
                "should name it"
            )
            log.warning("%s", self.problem)

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            if self.audit.moved != self._last or not self.health.ok:
                await self.probe()

    async def probe(self) -> bool:
        """Anchor the head now; health follows (what the records gate calls while the anchor is failing)."""
        try:
            await self._append("head")
        except AnchorError as e:
            if self.health.ok:
                log.error("audit anchor not written; calls are refused until it is: %s", e)
            self.health.degrade(str(e))
            return False
        except StorageError as e:  # the audit store's own fault: its health refuses calls; anchored later
            log.warning("audit anchor not written: %s", e)
            return self.health.ok
        if not self.health.ok:
            log.warning("audit anchor written again; calls are served")
        self.health.recover()
        return True

    async def _keep_lost(self, rows: int, hash_: str) -> None:
        """The head this gateway had committed when its store lost those rows (``AuditLog.keep_lost``),
        anchored as said then: ``audit verify`` finds fewer rows, or another hash at that count."""
        assert self._key is not None
        head = Head(self.place, self.audit.chain, rows, hash_)
        async with self._appending:
            await asyncio.to_thread(self.anchor.append, self._key, [("head", head)], self._existing)

    async def stop(self) -> None:
        """After the last row of a clean stop."""
        if self._key is not None and self.audit.moved != self._last:
            await self._append("stop")

    async def _append(self, kind: str, also: list[tuple[str, Head]] | None = None) -> int:
        assert self._key is not None
        async with self._appending:
            moved = self.audit.moved
            try:
                rows, hash_ = await self.audit.committed_head()
            except StorageError:
                if kind != "start":
                    raise
                rows, hash_ = 0, GENESIS  # a degraded store at start: nothing is recorded until writable
            head = Head(self.place, self.audit.chain, rows, hash_)
            adopted = await asyncio.to_thread(
                self.anchor.append, self._key, [*(also or []), (kind, head)], self._existing
            )
            self._last = moved
            return adopted

    def _existing(self) -> list[Head]:
        """Every other chain in the data dir (a new anchor adopts them as they are)."""
        own = Path(self.audit.path)
        return self._heads([f for f in audit_files(self.store_path) if f != own])

    def _heads(self, files: list[Path]) -> list[Head]:
        from sentinel_mcp.storage.snapshot import read_connection

        heads = []
        for file in files:
            if not file.exists():
                continue
            place = file.relative_to(self.store_path.parent).as_posix()
            try:
                with read_connection(file) as conn:
                    found = conn.execute("SELECT chain, hash, rows FROM audit_head ORDER BY chain").fetchall()
            except sqlite3.Error as e:  # not anchored: verify names a chain it never saw
                log.warning("audit anchor: %s not anchored (%s)", file, e)
                continue
            heads += [Head(place, str(c), int(n), str(h)) for c, h, n in found]
        return heads
