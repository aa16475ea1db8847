"""What the gateway writes about one call, in order: the decision before any effect, the outcome before
the answer. Every write is durable when it returns, or raises ``StorageError`` (the caller fails closed).

Also the gate in front of every call: while a store the guard relies on (audit, facts) cannot be written,
calls are refused with the cause; a degraded store is probed at most every ``PROBE_EVERY`` seconds, so the
gateway notices by itself when the storage is back. One probe at a time, and a call (or ``/healthz``) waits
for it at most ``PROBE_WAIT``: a store whose commits hang (PostgreSQL with its synchronous standby gone holds
each one until the commit bound) made every refused call and every health check wait the whole bound.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Callable, Sequence

from mcp.types import CallToolResult

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog, new_decision_id
from sentinel_mcp.gateway.call_timings import CallTimings, take_waited
from sentinel_mcp.storage import StorageError

log = logging.getLogger(__name__)

META_KEY = "sentinel/decision_id"  # where a result names its audit record (``_meta``)
PROBE_EVERY = 0.25
PROBE_WAIT = 1.0  # a healthy store's probe takes ms; past this the call is refused, the probe goes on


class CallRecord:
    __slots__ = ("audit", "base", "started", "decision_id", "policy_version", "observers", "timings", "alone",
                 "answer_meta")

    def __init__(self, audit: AuditLog, policy_version: str | None,
                 observers: Sequence[Callable[[AuditEntry], None]] = (),
                 alone: Callable[[], bool] = lambda: False, **base: Any) -> None:
        self.audit = audit
        self.observers = observers  # metrics, traces: told of each call once, when its record is durable
        # whether this is the only call in flight as a row is written (``AuditLog.write``: then it may be
        # committed on the event loop's thread, nobody else's work waiting behind it)
        self.alone = alone
        self.base = base
        self.started = time.perf_counter()
        self.decision_id = new_decision_id()
        self.policy_version = policy_version
        # the person's answering time that let this call be decided (0 for most calls)
        self.timings = CallTimings(ask_s=take_waited())
        self.answer_meta: Callable[[], dict[str, Any]] | None = None  # ``CallRequest.answer_meta``

    def _entry(self, event: str, decision: str, outcome: str, kw: dict[str, Any]) -> AuditEntry:
        return AuditEntry(**self.base, decision=decision, outcome=outcome, event=event,
                          decision_id=self.decision_id, policy_version=self.policy_version,
                          latency_ms=(time.perf_counter() - self.started) * 1000,
                          timings=self.timings.as_dict(), **kw)

    async def final(self, decision: str, outcome: str, **kw: Any) -> None:
        """A call that ends here (refused, asked, unknown): decision and outcome in one row."""
        await self._write(self._entry("final", decision, outcome, kw))

    async def decided(self, **kw: Any) -> None:
        """The call is allowed and about to be forwarded."""
        await self.audit.write(self._entry("decision", "allow", "forwarded", kw), self.alone())

    async def finished(self, outcome: str, **kw: Any) -> None:
        await self._write(self._entry("outcome", "allow", outcome, kw))

    async def _write(self, entry: AuditEntry) -> None:
        """A call's last row (final or outcome); observers see what the audit log holds, once per call."""
        await self.audit.write(entry, self.alone())
        for observe in self.observers:
            observe(entry)

    def stamp(self, result: CallToolResult) -> CallToolResult:
        """The answer naming its record, and carrying what the caller's front adds (one copy of the model)."""
        meta = dict(result.meta or {})
        meta[META_KEY] = self.decision_id
        if self.answer_meta is not None:
            # a key the result has keeps its place, as in {**meta, key: value}
            meta.update(self.answer_meta())
        return with_meta(result, meta)


_set = object.__setattr__
_META = frozenset(("meta",))
# a model keeping extra fields would take an unknown key of an update as extra (never here: "meta" is a field)
_PLAIN_COPY = CallToolResult.model_config.get("extra") != "allow"


def with_meta(result: CallToolResult, meta: dict[str, Any]) -> CallToolResult:
    """``result.model_copy(update={"meta": meta})``: the same copy (its ``__dict__`` with ``meta`` replaced in
    its place, the fields set with ``meta``, no extra or private values), built directly for a
    ``CallToolResult`` without extra or private values (pydantic's ``__copy__`` dispatches ``copy.copy`` three
    times and walks the update: about a tenth of a stamped answer's calls; issue 21); any other by
    ``model_copy``."""
    if (type(result) is not CallToolResult or not _PLAIN_COPY or result.__pydantic_extra__ is not None
            or getattr(result, "__pydantic_private__", None) is not None):
        return result.model_copy(update={"meta": meta})
    copied = CallToolResult.__new__(CallToolResult)
    state = result.__dict__.copy()
    state["meta"] = meta
    _set(copied, "__dict__", state)
    _set(copied, "__pydantic_extra__", None)
    _set(copied, "__pydantic_fields_set__", result.__pydantic_fields_set__ | _META)
    _set(copied, "__pydantic_private__", None)
    return copied


class RecordsGate:
    """Refuses calls while a store the decisions rely on (the audit log, the guard's facts) is degraded;
    probes it back to health."""

    def __init__(self, stores: Callable[[], list[Any]]) -> None:
        self.stores = stores  # the databases this gateway writes its records to
        self._next_probe = 0.0
        self._probing: asyncio.Task[None] | None = None  # the probe in flight (one at a time)

    def all_healthy(self) -> bool:
        """Every store writable, as far as it knows (``problem`` then says None, probing nothing): told
        without a coroutine, on every call."""
        for db in self.stores():
            if db is not None and not db.health.ok:
                return False
        return True

    async def _probe(self, bad: list[Any]) -> None:
        try:
            for db in bad:
                await db.probe()  # health follows its answer; a StorageError is its answer, not raised
        except Exception:  # noqa: BLE001 - nobody awaits this task's result: said, the store stays degraded
            log.exception("records store probe")
        finally:
            self._next_probe = time.monotonic() + PROBE_EVERY
            self._probing = None

    async def problem(self) -> str | None:
        bad = [db for db in self.stores() if db is not None and not db.health.ok]
        if not bad:
            return None
        now = time.monotonic()
        if self._probing is not None and self._probing.get_loop() is not asyncio.get_running_loop():
            self._probing = None  # started on a loop that is gone (a gateway's loops in tests): not waited on
        if self._probing is None and now >= self._next_probe:
            self._probing = asyncio.get_running_loop().create_task(self._probe(bad), name="records-probe")
        if self._probing is not None:
            # shielded: a caller that stops waiting leaves the probe running for the next one
            await asyncio.wait((self._probing,), timeout=PROBE_WAIT)
            bad = [db for db in bad if not db.health.ok]
            if not bad:
                return None
        causes = "; ".join(f"{db.name}: {db.health.cause}" for db in bad)
        return ("Sentinel cannot write its records, so it refuses every guarded call until storage "
                f"recovers ({causes})")


def storage_refusal(e: StorageError) -> str:
    return f"Sentinel could not record this call, so it was not run (fail closed): {e}"
