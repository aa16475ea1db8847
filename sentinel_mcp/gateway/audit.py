"""The audit log, written ahead: a call's decision is on disk before the call is forwarded (or refused),
and its outcome before the caller gets the answer.

Each write waits for its commit; concurrent calls share commits (group commit in the storage layer), so
the cost per call is a share of one fsync, not one fsync each. Rows are append-only and hash-chained
(``audit_chain.py`` verifies them). A write that fails raises ``StorageError``: the gateway then refuses
the call (fail closed). Rows are built in one place, ``AuditLog.row``, which passes every entry through the
redactor (``redactor.py``: secrets never reach the log, allowed or denied) exactly once before it is stored
and hashed.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import math
from dataclasses import replace
from pathlib import Path
from typing import Any, Awaitable, Callable

from sentinel_mcp.core.running_loop import running_loop
from sentinel_mcp.gateway.audit_batch import RowBatch, batchable
from sentinel_mcp.gateway.audit_schema import GENESIS, HASHED, OPTIONAL_TAIL, SCHEMA
from sentinel_mcp.gateway.audit_repeats import RepeatedRows
from sentinel_mcp.gateway.audit_readback import audit_files, read_audit, read_open
from sentinel_mcp.gateway.audit_seal import Sealer
from sentinel_mcp.core.audit_entry import AuditEntry, new_decision_id
from sentinel_mcp.core.display_text import Marked, unmarked
from sentinel_mcp.core.json_text import compact_encoder
from sentinel_mcp.core.record_bounds import (
    AUDIT_ARGUMENTS, AUDIT_PROOF, RecordLimits, bounded_json, cut_text, shallow, values_past,
)
from sentinel_mcp.core.redactor import redact_arguments, redact_record, scrub_text, scrub_with
from sentinel_mcp.storage import Statement, StorageError, open_database
from sentinel_mcp.storage.sqlite import EXCLUSIVE, PROCESS
from sentinel_mcp.storage.database import StatementError
from sentinel_mcp.storage.location import shown_location
from sentinel_mcp.storage.open import release

# a tool's arguments and a decision's proof are kept within their record limits (``core/record_bounds.py``:
# cut, still JSON, with the full value's hash), whatever a caller, an upstream or a rulebase made of them
MAX_ARGS_CHARS = AUDIT_ARGUMENTS.chars
MAX_PROOF_CHARS = AUDIT_PROOF.chars
# a row whose arguments or proof weigh more values than this (``values_past``: a long string weighs more)
# is built in a worker thread: its redaction walks every key and scans every string (~5 ms at this bound),
# and one call of 99,000 keys, or a 900 KB string, held the event loop, every other caller's answers with
# it, for seconds (tests/records/test_large_rows_off_the_loop.py); the usual row weighs a few
INLINE_VALUES = 256
# texts a caller shapes, cut as the arguments are: a row is never much larger than what Sentinel itself
# writes, so a call cannot make the log (and the disk everyone's calls need) grow by megabytes
MAX_NAME_CHARS = 1000  # the session, the client's name, the tool's name as the caller spelt it
MAX_TEXT_CHARS = MAX_PROOF_CHARS  # a reason, an error

log = logging.getLogger(__name__)

__all__ = ["AuditEntry", "AuditLog", "StorageError", "audit_files", "new_decision_id", "read_audit"]


# built once: ``json.dumps`` with options builds a new encoder on every call (several per row, every call)
# ASCII: any text (lone surrogates too) is stored escaped, exactly, and can always be encoded
_STORED = json.JSONEncoder(ensure_ascii=True, default=str, sort_keys=True)
_CANONICAL = compact_encoder(ensure_ascii=False)  # its C encoder built once too (core/json_text.py)


def _json(value: Any, limits: RecordLimits | None = None) -> str | None:
    if value is None:
        return None
    # ``{}``: the arguments of most calls to tools without parameters (its text, without the encoder's set-up)
    if type(value) is dict and not value:
        return "{}"
    return _STORED.encode(value) if limits is None else bounded_json(value, limits)


def _timings_text(timings: Any) -> str | None:
    """``_json(timings)`` for a call's timings (four finite floats under fixed names: the usual row) written
    out directly, the same text (sorted keys, ``json``'s separators, ``repr`` of each float); anything else
    through ``_json``."""
    if type(timings) is dict and len(timings) == 4:
        try:  # four look-ups, not a generator over the keys (five resumptions a row; issue 21)
            ask, fetch = timings["ask"], timings["fetch"]
            forward, guard = timings["forward"], timings["guard"]
        except KeyError:
            return _json(timings)
        if (type(ask) is float and type(fetch) is float and type(forward) is float and type(guard) is float
                and math.isfinite(ask + fetch + forward + guard)):
            return f'{{"ask": {ask!r}, "fetch": {fetch!r}, "forward": {forward!r}, "guard": {guard!r}}}'
    return _json(timings)


def _text(value: str | None, limit: int = MAX_TEXT_CHARS) -> str | None:
    """Text a caller may have shaped (tool names, reasons quoting arguments): cut to ``limit`` characters
    (saying how many more there were), lone surrogates and NUL escaped (``\\udc80``, ``\\x00``): every
    backend can hold what is left (PostgreSQL's ``text`` refuses a NUL, which SQLite keeps), so the same row
    is stored, and hashed, on both."""
    if value is None or not isinstance(value, str):
        return value
    value = str(value)  # a str subclass too is cut (it passed uncut: 1.8 MB of a Marked reason stored)
    if len(value) > limit:
        value = cut_text(value, limit)  # says how much it lost (``record_bounds``)
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            value = value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value.replace("\x00", "\\x00") if "\x00" in value else value


# the limits of ``AuditLog.row``'s text columns, in ``_texts``' order: names, then reason, error, principal
_TEXT_LIMITS = (MAX_NAME_CHARS,) * 11 + (MAX_TEXT_CHARS,) * 3


def _texts(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """``_text`` of each of a row's text columns (limits: ``_TEXT_LIMITS``). The usual row's texts together
    are short ASCII without NUL, so every one is stored as it is: told from their joined text (one check, not
    four per column); any other row column by column."""
    try:
        joined = "".join(filter(None, values))  # a value that is not text (TypeError): column by column
    except TypeError:
        joined = None
    if joined is not None and len(joined) <= MAX_NAME_CHARS and joined.isascii() and "\x00" not in joined:
        return values  # each text is at most as long as all together, under every column's limit
    return tuple(_text(v, limit) for v, limit in zip(values, _TEXT_LIMITS))


def _raw(text: str | None) -> str | None:
    return None if text is None else unmarked(text)


def canonical(values: tuple[Any, ...]) -> str:
    """The text a row's hash covers: its ``HASHED`` columns as JSON (floats round-trip exactly). The columns
    added later (``OPTIONAL_TAIL``: principal, timings) are left out from the end while empty, so rows chained
    before they existed still verify; the texts stay distinct (arrays of different lengths, or a null kept in
    the middle), so a value added or removed breaks the hash."""
    if type(values) is tuple and values and values[-1] is not None:
        return _CANONICAL(values)  # the usual row (its timings set): nothing left out, no copy
    values = tuple(values)
    for _ in range(OPTIONAL_TAIL):
        if values and values[-1] is None:
            values = values[:-1]
        else:
            break
    return _CANONICAL(values)


MAX_KEPT_TEXT = 1000  # reasons and errors up to this long have their scrubbed text kept (they repeat)


@functools.lru_cache(maxsize=1024)
def _scrubbed(text: str) -> str:
    return scrub_text(text, set())


def _scrub(text: str | None) -> str | None:
    if text is None:
        return None
    return _scrubbed(text) if len(text) <= MAX_KEPT_TEXT else scrub_text(text, set())


def redact_entry(entry: AuditEntry) -> AuditEntry:
    """The entry as it may be stored: secret arguments masked, and their values scrubbed from the reason,
    proof and error (``redactor.redact_record``)."""
    return redacted_entry(entry)[0]


def redacted_entry(entry: AuditEntry) -> tuple[AuditEntry, set[str] | None]:
    """``redact_entry``, and the secret values its arguments held (None: their shallow copy was redacted, or
    the usual row of a tool without parameters, which has none)."""
    if not entry.arguments and entry.proof is None and type(entry.arguments) in (dict, type(None)):
        # no arguments (no secret values to look for) and no proof, the usual row of a tool without
        # parameters: what redact_record does comes down to scrubbing the reason and the error, whose texts
        # repeat from call to call (the same words, the same result: kept)
        reason, error = _scrub(entry.reason), _scrub(entry.error)
        if reason == entry.reason and error == entry.error:
            return entry, None
        return replace(entry, reason=reason, error=error), None
    fields = {
        "arguments": entry.arguments,
        "reason": entry.reason,
        "proof": entry.proof,
        "error": entry.error,
    }
    secrets: set[str] | None
    try:
        redacted, secrets = _redacted_fields(fields, entry.sensitive)
    except (RecursionError, ValueError):  # nested deeper than it recurses, an integer too long to write: what
        # lies below the record's depth is cut first (not kept anyway: ``record_bounds``), the rest redacted
        fields["arguments"] = shallow(entry.arguments, AUDIT_ARGUMENTS.depth)
        fields["proof"] = shallow(entry.proof, AUDIT_PROOF.depth)
        redacted, secrets = redact_record(fields, entry.sensitive), None
    if all(redacted[k] is v or redacted[k] == v for k, v in fields.items()):
        return entry, secrets  # nothing was masked (the usual row): the entry as it is, no copy of each field
    return replace(entry, **redacted), secrets


def _redacted_fields(fields: dict[str, Any], sensitive: frozenset[str]) -> tuple[dict[str, Any], set[str]]:
    """``redact_record(fields, sensitive)`` and the secret values the arguments held."""
    secrets: set[str] = set()
    out = dict(fields)
    if out["arguments"] is not None:
        out["arguments"], secrets = redact_arguments(out["arguments"], sensitive)
    for key in ("reason", "proof", "error"):
        out[key] = scrub_with(out[key], secrets)
    return out, secrets


# One statement a row, on every backend: the schema's trigger inserts the row only if it is chained onto the
# head (its ``prev_hash`` is the head's hash) and moves the head with it (``audit_schema.py``); a row chained
# onto a head that did not get committed inserts nothing (counted 0), and is chained again
_INSERT_ON_HEAD = "INSERT INTO audit (" + ", ".join(HASHED) + ", prev_hash, hash, mac) VALUES (" + ", ".join(
    "?" * (len(HASHED) + 3)) + ")"


# sha256's state copied a row, not made: ``hashlib.sha256()`` looks its digest up in OpenSSL each time (~1 us
# of a row's CPU when its caches are cold, as on the call path; ``benchmarks/README.md``, perf-rows9)
_SHA256 = hashlib.sha256()


def chain_hash(prev: str, text: str) -> str:
    h = _SHA256.copy()
    h.update((prev + text).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def encoded(text: str) -> bytes:
    """A row's canonical text as its hash covers it (after the previous hash, which is ASCII)."""
    return text.encode("utf-8", "surrogatepass")


def _link(sealer: Sealer | None, prev: str, text: str) -> tuple[str, str | None]:
    """The row's hash after ``prev`` (``chain_hash``) and its seal (``audit_seal.py``; None without a key),
    from one encoding of its text."""
    if sealer is None:
        return chain_hash(prev, text), None
    body = encoded(text)
    h = _SHA256.copy()
    h.update(prev.encode("ascii") + body)
    return h.hexdigest(), sealer(body)


class AuditLog:
    def __init__(
        self, path: Path, *, chain: str = "main", redactor: Callable[[AuditEntry], AuditEntry] = redact_entry,
        key: bytes | None = None, sync: str = "full",
    ) -> None:
        self.path = path
        self.chain = chain
        self.sync = sync  # ``sentinel.audit.sync`` (config_audit.py): "process" commits without an fsync
        # seals each row and checks rows read (``audit_seal.py``); None: no MAC, rows read as stored
        self.key = key
        self._sealer = None if key is None else Sealer(key)
        self.redactor = redactor  # applied to every entry, once, before its row is built and hashed
        self._repeats = RepeatedRows()  # a call's outcome row takes its decision row's redacted arguments
        self.db: Any = None
        self._head: str | None = None  # the chain's hash as of the last write submitted (None: read it)
        self._rechain = asyncio.Lock()
        self._typed = False  # batches cast values to their columns' types (PostgreSQL: ``audit_batch.py``)
        self._open: RowBatch | None = None  # the newest batch (it answers its rows' callers)
        self._rows = 0  # the chain's rows as of the last write submitted (with ``_head``)
        self._chained_last: tuple[int, str] = (0, GENESIS)  # the place and hash ``_chained`` gave last
        # the newest row this writer knows committed: (its place in the chain, hash, decision id, row id:
        # known on SQLite, where it is looked up by it, which needs no index of its own; None: by decision id)
        self._durable: tuple[int, str, str, int | None] | None = None
        # rows this writer committed that the store no longer holds (rows, hash of the last), until kept
        self.lost: tuple[int, str] | None = None
        # where such a head is kept (the anchor, ``audit_anchoring.py``): told before any row is chained onto
        # what the store holds instead; None: nowhere (a warning only)
        self.keep_lost: Callable[[int, str], Awaitable[None]] | None = None

    async def open(self) -> "AuditLog":
        self.db = open_database(self.path, "audit", PROCESS if self.sync == "process" else EXCLUSIVE)
        # rows in batches on every backend; PostgreSQL's lists say their columns' types (``audit_batch.py``)
        self._typed = not self.db.multi_row_values
        try:
            await self.db.migrate(SCHEMA)
            self._head = await self._read_head()
        except StorageError:
            pass  # the store starts degraded: calls are refused until it can be written
        return self

    @property
    def health(self) -> Any:
        return self.db.health

    # ------------------------------------------------------------------ the one place a row is built
    def row(self, entry: AuditEntry) -> tuple[Any, ...]:
        if isinstance(entry.reason, Marked) or isinstance(entry.error, Marked):
            # a row holds what was said, raw: every reader marks it once where it is shown (as rows written
            # before marking existed); a Marked text stored would be marked again by each of them
            entry = replace(entry, reason=_raw(entry.reason), error=_raw(entry.error))
        arguments: str | None
        proof: str | None
        own = self.redactor is redact_entry
        # (asked only while a decision row is kept: the usual row of a tool without parameters keeps none)
        repeated = self._repeats.take(entry) if own and self._repeats.kept else None
        if repeated is not None:  # an outcome row: its arguments and proof as its decision row stored them
            entry, arguments, proof = repeated
        elif own:
            given, (entry, secrets) = entry, redacted_entry(entry)
            arguments, proof = _json(entry.arguments, AUDIT_ARGUMENTS), _json(entry.proof, AUDIT_PROOF)
            if secrets is not None:  # (None: nothing its outcome row could take)
                self._repeats.keep(given, secrets, entry, arguments, proof)
        else:
            entry = self.redactor(entry)
            arguments, proof = _json(entry.arguments, AUDIT_ARGUMENTS), _json(entry.proof, AUDIT_PROOF)
        texts = _texts((entry.decision_id, entry.event, entry.session, entry.client, entry.origin, entry.tool,
                        entry.upstream, entry.arg_digest, entry.decision, entry.policy_version, entry.outcome,
                        entry.reason, entry.error, entry.principal))
        return (
            self.chain,
            entry.ts,
            *texts[:8],  # decision_id, event, session, client, origin, tool, upstream, arg_digest
            arguments,
            texts[8],  # decision
            texts[11],  # reason
            proof,
            texts[9],  # policy_version
            entry.latency_ms,
            texts[10],  # outcome
            texts[12],  # error
            texts[13],  # principal
            _timings_text(entry.timings),
        )

    async def _read_head(self) -> str:
        await self.db.write(
            "INSERT INTO audit_head (chain, hash, rows) VALUES (?, ?, 0) ON CONFLICT (chain) DO NOTHING",
            (self.chain, GENESIS),
        )
        rows = await self.db.query("SELECT hash, rows FROM audit_head WHERE chain = ?", (self.chain,))
        self._rows = int(rows[0][1])
        return str(rows[0][0])

    def _chained(self, values: tuple[Any, ...], text: str) -> list[Statement]:
        """The statements appending this row (``text``: its ``canonical`` form) after the current head
        (computed here, no await: in order)."""
        assert self._head is not None
        prev = self._head
        if self._sealer is None:  # ``_link`` without a key, in place (two calls fewer a row; issue 21)
            h = _SHA256.copy()
            h.update((prev + text).encode("utf-8", "surrogatepass"))
            new, mac = h.hexdigest(), None
        else:
            new, mac = _link(self._sealer, prev, text)
        self._head = new
        self._rows += 1
        self._chained_last = (self._rows, new)
        return [Statement(_INSERT_ON_HEAD, (*values, prev, new, mac))]

    async def write(self, entry: AuditEntry, alone: bool = False) -> str:
        """Append one event durably; its decision id is returned. Raises ``StorageError``, whatever went
        wrong: a row the store refuses for its own content (a value it cannot bind) is a record that cannot
        be written like any other, so the caller fails closed with its refusal, never an internal error.
        ``alone``: the caller has nothing else in flight, so the row may be committed on this thread while
        the store's writer is idle (``Database.write_inline``) instead of waiting for that thread's wake-ups.
        """
        try:
            return await self._write(entry, alone)
        except StatementError as e:  # the row's own content, refused by the store: as any row it cannot hold
            self._head = None
            raise StorageError(f"audit log: this row could not be stored ({e})") from e
        except StorageError:
            raise
        except Exception as e:
            self._head = None  # what we chained onto may not have been committed: read it again
            raise StorageError(f"audit log: this row could not be stored ({type(e).__name__}: {e})") from e

    async def _write(self, entry: AuditEntry, alone: bool) -> str:
        if not entry.decision_id:
            entry.decision_id = new_decision_id()
        if self.db is None:
            raise StorageError("audit log is not open")
        if values_past(entry.arguments, INLINE_VALUES) or values_past(entry.proof, INLINE_VALUES):
            values = await asyncio.to_thread(self.row, entry)  # chained below, in order, on the loop
        else:
            values = self.row(entry)
        text = canonical(values)  # what its hash covers, on every path
        if alone and self._head is not None:
            try:
                results = self.db.write_inline(lambda: self._chained(values, text))
            except BaseException:
                self._head = None  # what we chained onto may not have been committed: read it again
                raise
            if results is not None:
                if results[-1].rowcount == 1:
                    self._committed(*self._chained_last, entry.decision_id, self._row_id(results[-1]))
                    return entry.decision_id
                self._head = None  # the head moved under us (another writer): chain again, below
        if self._head is not None and batchable(values, text):
            if await self._batched(values, text):
                return entry.decision_id
        elif self._head is not None:
            statements = self._chained(values, text)
            mine = self._chained_last
            try:
                results = await self.db.run(statements)
            except StorageError:
                self._head = None  # what we chained onto may not have been committed: read it again
                raise
            if results[-1].rowcount == 1:
                self._committed(*mine, entry.decision_id, self._row_id(results[-1]))
                return entry.decision_id
        # no head known, or a write before this one failed: chain onto what is really stored, one at a time
        async with self._rechain:
            for _ in range(3):
                try:
                    self._head = await self._read_head()
                    await self._keep_what_was_lost()
                    statements = self._chained(values, text)
                    mine = self._chained_last
                    results = await self.db.run(statements)
                except StorageError:
                    self._head = None
                    raise
                if results[-1].rowcount == 1:
                    self._committed(*mine, entry.decision_id, self._row_id(results[-1]))
                    return entry.decision_id
        self._head = None
        raise StorageError("audit log: the chain head kept moving under this writer")

    async def _batched(self, values: tuple[Any, ...], text: str) -> bool:
        """The row chained onto the head and put in the open batch (``audit_batch.py``), durable on return;
        False when its batch inserted nothing (chained onto rows that were not committed: chain it again)."""
        assert self._head is not None
        prev = self._head
        new, mac = _link(self._sealer, prev, text)
        self._rows += 1
        place = self._rows
        mine: asyncio.Future[Any] = running_loop().create_future()
        batch = self._open
        if batch is None or not batch.add(values, prev, new, mine, mac):
            batch = RowBatch(self.chain, self._typed)
            batch.add(values, prev, new, mine, mac)
            self.db.submit_open(batch, batch)  # raises when the store is closed: then nothing may join it
            self._open = batch
        index = batch.size - 1  # this row's place in its batch
        self._head = new
        try:
            results = await mine
        except StorageError:
            self._head = None  # what we chained onto may not have been committed: read it again
            raise
        finally:
            if self._open is batch and batch.answered:
                self._open = None  # nothing more may join it
        size = batch.size  # final: the batch was sealed before it was answered
        if results[-1].rowcount != size:
            return False
        last = self._row_id(results[-1])  # the batch's rows took consecutive ids, in order
        self._committed(place, new, values[2], None if last is None else last - (size - 1 - index))
        return True

    def _row_id(self, result: Any) -> int | None:
        """The id of the last row an ``INSERT`` of the log inserted (SQLite's; None elsewhere)."""
        return result.lastrowid or None

    def _committed(self, place: int, hash_: str, decision_id: str, row_id: int | None) -> None:
        if self._durable is None or place > self._durable[0]:
            self._durable = (place, hash_, decision_id, row_id)

    async def _keep_what_was_lost(self) -> None:
        """Before chaining onto a head read again: are the rows this writer committed still there? Not when
        its file was replaced (an older copy), deleted or rolled back under it: the store then goes on from
        what it holds (it recovers by itself), and the head this writer had committed is handed to
        ``keep_lost`` (the anchor) first, so ``audit verify`` says those rows are missing, however soon after
        its last anchor they were lost. Raises ``StorageError`` (the call is refused) until it is kept."""
        if self._durable is not None:
            place, hash_, decision_id, row_id = self._durable
            if row_id is not None:
                found = await self.db.query("SELECT hash FROM audit WHERE id = ?", (row_id,))
            else:
                found = await self.db.query(
                    "SELECT hash FROM audit WHERE decision_id = ? AND chain = ?", (decision_id, self.chain))
            if all(row[0] != hash_ for row in found):
                self.lost = (place, hash_)
            self._durable = None  # the rows from here on are what this writer will know committed
        if self.lost is None:
            return
        log.error("audit log %s no longer holds rows this gateway committed (%d rows, head %s): replaced, "
                  "deleted or rolled back under it", shown_location(self.path), *self.lost)
        if self.keep_lost is not None:
            try:
                await self.keep_lost(*self.lost)
            except Exception as e:
                raise StorageError(f"audit log {shown_location(self.path)} lost rows this gateway committed, "
                                   f"and their head could not be anchored: {e}") from e
        self.lost = None

    async def flush(self) -> None:
        """Every write is durable when it returns; kept for callers of the batched log."""

    async def read(
        self, tail: int = 20, session: str | None = None, principal: str | None = None
    ) -> list[dict[str, Any]]:
        """The newest ``tail`` calls (decision and outcome merged), oldest first, through the open store; with
        a key, each row's seal checked (``audit_readback.merge_calls``)."""
        return await read_open(self.db, tail, session, principal, self.key)

    @property
    def moved(self) -> str | None:
        """The chain's hash as of the last write submitted: it changes with every row (what the anchor
        watches: nothing is added to a call's path)."""
        return self._head

    async def committed_head(self) -> tuple[int, str]:
        """This chain's committed (rows, hash), as the store holds it."""
        rows = await self.db.query("SELECT rows, hash FROM audit_head WHERE chain = ?", (self.chain,))
        return (int(rows[0][0]), str(rows[0][1])) if rows else (0, GENESIS)

    async def close(self) -> None:
        if self.db is not None:
            await release(self.db)
            self.db = None
