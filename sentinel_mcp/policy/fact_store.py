"""The fact store: ground facts per session with provenance, source call and TTL, behind the storage seam.

The store is the source of truth and survives restarts; the Prolog engine holds a mirror of the valid
facts of the sessions in use (see ``knowledge.py``). Expired facts are never returned and are purged.

Any Python string is kept, a lone UTF-16 surrogate too (JSON allows ``"\\ud800"`` in a session id or an
argument; SQLite's UTF-8 cannot hold it): text goes in escaped and comes out restored, exactly
(``stored_text``).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Self

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.stored_text import restored as _back
from sentinel_mcp.core.stored_text import stored as _kept
from sentinel_mcp.core.stored_text import stored_opt as _opt
from sentinel_mcp.policy import signed_facts
from sentinel_mcp.policy.confirmed_tools import ConfirmedTools
from sentinel_mcp.policy.fact_rows import Fact, Learned, argument_of, fact_rows, row_to_fact, values_of
from sentinel_mcp.policy.fact_schema import STORE_SCHEMA
from sentinel_mcp.policy.kept_effects import KEPT_SCOPE
from sentinel_mcp.policy.learning_buffer import LearningBuffer
from sentinel_mcp.storage import Statement
from sentinel_mcp.storage.row_lists import row_lists
from sentinel_mcp.storage.row_signature import PROCESS_KEY
from sentinel_mcp.storage.store import SeamStore


_COLS = signed_facts.FACT_COLS
_INSERT_FACTS = f"INSERT INTO facts ({_COLS})"
_ON_FACT = (
    " ON CONFLICT (session, fact) DO UPDATE SET provenance=excluded.provenance, "
    "source_tool=excluded.source_tool, source_digest=excluded.source_digest, contexts=excluded.contexts, "
    "established_at=excluded.established_at, expires_at=excluded.expires_at, args=excluded.args"
)
_UPSERT = f"{_INSERT_FACTS} VALUES (?,?,?,?,?,?,?,?,?,?){_ON_FACT}"
# Expired facts deleted per transaction. One purge once held the store's writer for the whole delete: under
# 16 clients of the airline read (a conversation per call, facts for 60 s) a minute's facts were 700,000 rows
# and their values a million, deleted in 6-10 s during which no call could learn and every call stopped.
# A batch takes some tens of milliseconds.
PURGE_BATCH = 2_000
MAX_PURGE_BATCHES = 5_000  # one purge's most (10M facts); the next purge goes on
_EXPIRED_BATCH = (
    "SELECT {} FROM facts WHERE expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at, id LIMIT ?"
)
# the same batch in both statements (same order, same limit, one transaction); the values first, while their
# facts are still there to name them
_PURGE_VALUES = f"DELETE FROM fact_values WHERE (session, fact) IN ({_EXPIRED_BATCH.format('session, fact')})"
_PURGE_FACTS = f"DELETE FROM facts WHERE id IN ({_EXPIRED_BATCH.format('id')})"
# a server store's replicas read each other's facts: a fact established by a replica whose clock is this far
# ahead is still valid here (it lives at most its TTL plus this)
SHARED_CLOCK_SKEW = 5.0
MAX_VERSIONS = 20_000  # sessions whose shared-store counter this process remembers (most recently changed)
_INSERT_VALUES = "INSERT INTO fact_values (session, value, fact)"
_ON_VALUE = " ON CONFLICT DO NOTHING"
_ADD_VALUE = f"{_INSERT_VALUES} VALUES (?,?,?){_ON_VALUE}"
# a session's counter: a new value from the sequence (never one this or any session had), and the one it
# replaced
_NEXT = "INSERT INTO fact_sessions (session, version, prev) VALUES (?, nextval('fact_session_versions'), 0)"
_REPLACE = " ON CONFLICT (session) DO UPDATE SET prev = fact_sessions.version, version = excluded.version"
_BUMP = f"{_NEXT}{_REPLACE} RETURNING version, prev"
# the rows of sessions that hold nothing any more (no fact, no bound context), PURGE_BATCH at a time: found
# first, then deleted only if the counter is still the one found (a change since, committed or not, keeps it)
_EMPTY_SESSIONS = (
    "SELECT session, version FROM fact_sessions s WHERE NOT EXISTS (SELECT 1 FROM facts f WHERE f.session = "
    "s.session) AND NOT EXISTS (SELECT 1 FROM contexts c WHERE c.session = s.session) LIMIT ?"
)
_FORGET_SESSION = (
    "DELETE FROM fact_sessions s WHERE session = ? AND version = ? AND NOT EXISTS (SELECT 1 FROM facts f "
    "WHERE f.session = s.session) AND NOT EXISTS (SELECT 1 FROM contexts c WHERE c.session = s.session)"
)


class FactStore(SeamStore):
    """Facts behind the storage seam: every change is one transaction, durable when it returns, except the
    facts a tool's result taught (``learn``: written behind the call, a read of their session waits for them).

    Shared: every gateway on a data dir keeps its sessions' facts here (rollback journal, no -shm); with a
    server store every change bumps its session's counter (``version``), so a replica's engine mirror of a
    session is reloaded when another replica changed it. A server store's rows are signed with ``key`` (the
    cluster's ``SharedStore.key("facts")``; None: this process's own) and a row not signed with it is absent
    to every read (``signed_facts.py``)."""

    schema = STORE_SCHEMA
    database_name = "facts"

    def __init__(self, path: str | Path, key: bytes | None = None) -> None:
        super().__init__(path)
        self.key = key if key is not None else PROCESS_KEY
        self.refused = 0  # rows read that no replica of this cluster signed (made up, moved, altered)
        # session -> (its counter after this store's own last change, the counter that change replaced)
        self.versions: dict[str, tuple[int, int]] = {}
        # the tools named by the confirmations this process wrote or read (confirmed_tools.py)
        self.confirmed_tools = ConfirmedTools(knowable=not self.shared)
        self._learning = LearningBuffer(self._submit_learned)  # facts learned, written behind their calls

    async def open(self) -> Self:
        if self.is_open:
            return self
        await super().open()
        if not self.shared:
            await self._drop_future()
        return self

    def _present(self) -> float:
        """The latest establishment time a valid fact may have: the clock read now (a fact learned after the
        caller read its ``now`` is not from the future), plus the replicas' clock skew on a shared store."""
        return process_clock.now() + (SHARED_CLOCK_SKEW if self.shared else 0.0)

    async def _drop_future(self) -> None:
        """Delete the facts established after now: written before the wall clock was set back (and this
        process started), their age is unknown, and kept they would live for their TTL plus the step."""
        now = process_clock.now()
        await self.db.run([
            Statement("DELETE FROM fact_values WHERE (session, fact) IN (SELECT session, fact FROM facts "
                      "WHERE established_at > ?)", (now,)),
            Statement("DELETE FROM facts WHERE established_at > ?", (now,)),
        ])

    # ---------------------------------------------------------------- facts
    async def add(self, facts: list[Fact]) -> None:
        """Insert or refresh facts (same session and fact text: the newer one wins), in one transaction."""
        if not facts:
            return
        self.confirmed_tools.note(facts)  # before the write: a confirmation is never stored unnoted
        await self._run(self._statements(fact_rows(facts), values_of(facts)), {f.session for f in facts})

    async def learn(self, facts: list[Fact]) -> None:
        """``add`` the facts a tool's result taught, written behind the caller (``learning_buffer.py``: they
        share a commit with other calls' and nobody waits for it; a read of the session waits). On a server
        store, where replicas read each other's writes, this is ``add``."""
        if not facts:
            return
        self.confirmed_tools.note(facts)
        await self._learn({f.session for f in facts}, fact_rows(facts), values_of(facts))

    async def learn_rows(self, facts: Learned) -> None:
        """``learn`` for the facts of one result, as rows (``learned``)."""
        for args in facts.confirmations:
            self.confirmed_tools.note_confirmation(args, facts.source_tool)
        await self._learn({facts.session}, facts.rows, facts.values)

    async def _learn(self, sessions: set[str], rows: list[tuple[Any, ...]],
                     values: list[tuple[str, str, str]]) -> None:
        # rows made by the caller: a fact that cannot be written fails its own caller, not a shared commit
        if self.shared:
            await self._run(self._statements(rows, values), sessions)
            return
        write = self._learning.hold(sessions, rows, values)
        if write is not None:  # past the buffer's bounds: wait for this write (its failure is logged there)
            await asyncio.wait({write})

    def _submit_learned(self, rows: list[tuple[Any, ...]],
                        values: list[tuple[Any, ...]]) -> "asyncio.Future[Any]":
        # a fact learned again within the window (a conversation reading the same record twice): only its
        # newest row, which is what the upserts in order would leave (each sets every column but the key)
        newest = {(r[0], r[3]): r for r in rows}
        return self.db.submit_write(self._statements(list(newest.values()), list(dict.fromkeys(values))))

    def _statements(self, rows: list[tuple[Any, ...]], values: list[tuple[Any, ...]]) -> list[Statement]:
        if self.shared:  # replicas act on each other's rows: each signed (a server store: a statement a row)
            return [Statement(_ADD_VALUE, values, many=True),
                    Statement(signed_facts.UPSERT, signed_facts.signed(self.key, rows), many=True)]
        if self.db.multi_row_values:  # a few multi-row statements instead of a statement step per row
            return [*row_lists(_INSERT_VALUES, _ON_VALUE, values), *row_lists(_INSERT_FACTS, _ON_FACT, rows)]
        # a statement per row, pipelined (storage.Database.multi_row_values says why)
        return [Statement(_ADD_VALUE, values, many=True), Statement(_UPSERT, rows, many=True)]

    async def close(self) -> None:
        if self.is_open:
            await self._learning.settled()  # what was learned is written before the database is let go
        await super().close()

    async def _run(self, statements: list[Statement], sessions: Iterable[str]) -> list[Any]:
        """One transaction; on a shared store it also bumps each session's counter (noted in ``versions``)."""
        self._learning.flush()  # learned facts held are queued first: the writer keeps the order
        if not self.shared:
            return await self.db.run(statements)
        order = sorted(set(sessions))  # one lock order on every replica: no deadlock between two of them
        results = await self.db.run([*statements, *(Statement(_BUMP, (_kept(s),)) for s in order)])
        for s, r in zip(order, results[len(statements) :]):
            self._note_version(s, int(r.rows[0][0]), int(r.rows[0][1]))
        return results

    def _note_version(self, session: str, version: int, prev: int) -> None:
        # the most recently changed sessions only (a conversation per call must not grow it forever); a
        # session missing here only costs its next decision a reload from the store
        self.versions.pop(session, None)
        self.versions[session] = (version, prev)
        while len(self.versions) > MAX_VERSIONS:
            del self.versions[next(iter(self.versions))]

    async def spend_confirmation(self, session: str, tool: str, digest: str) -> tuple[int, int | None]:
        """Shared store: delete this call's confirmation(s) atomically (one replica in the cluster gets them;
        a racing one finds them gone after our commit). Returns (how many, the session's counter after)."""
        self._learning.flush()
        rows = await self.db.consume(
            "WITH gone AS (DELETE FROM facts WHERE session = ? AND predicate = '$confirmed' AND source_tool "
            "= ? "
            f"AND source_digest = ? RETURNING {_COLS}, mac), bump AS (INSERT INTO fact_sessions "
            "(session, version, prev) SELECT ?, nextval('fact_session_versions'), 0 "
            "WHERE EXISTS (SELECT 1 FROM gone)"
            f"{_REPLACE} RETURNING version, prev) "
            "SELECT gone.*, bump.version, bump.prev FROM bump LEFT JOIN gone ON true",
            (_kept(session), _opt(tool), _opt(digest), _kept(session)),
        )
        if not rows:  # nothing was there to take (no bump either)
            return 0, None
        version, prev = rows[0][-2], rows[0][-1]
        # only a confirmation a replica of this cluster wrote counts (a made-up one is gone, granted nothing)
        spent = len(self._genuine(session, [r[:-2] for r in rows if r[0] is not None]))
        if version is not None:
            self._note_version(session, int(version), int(prev))
        return spent, version

    def _genuine(self, session: str, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """Server store: the rows (as read, their MAC last) a replica of this cluster signed, without the
        MAC; the others are counted, logged and left out (absent: asked or fetched again)."""
        key = self.key
        kept = [r[:-1] for r in rows if signed_facts.genuine(key, r)]
        if len(kept) != len(rows):
            self.refused += len(rows) - len(kept)
            signed_facts.note_refused("fact", session, len(rows) - len(kept))
        return kept

    async def has_confirmation(self, session: str, tool: str, digest: str) -> bool:
        """Whether a confirmation of this exact call is stored (valid or not): a read, no write."""
        where = ("FROM facts WHERE session = ? AND predicate = '$confirmed' AND source_tool = ? "
                 "AND source_digest = ?")
        params = (_kept(session), _opt(tool), _opt(digest))
        if self.shared:
            return bool(self._genuine(session, await self.db.query(f"SELECT {_COLS}, mac {where}", params)))
        return bool(await self.db.query(f"SELECT 1 {where} LIMIT 1", params))

    async def version(self, session: str) -> int:
        """The session's change counter in the shared store (0: never changed); 0 on a SQLite store."""
        if not self.shared:
            return 0
        rows = await self.db.query("SELECT version FROM fact_sessions WHERE session = ?", (_kept(session),))
        return int(rows[0][0]) if rows else 0

    async def valid(self, session: str, now: float | None = None, predicate: str | None = None) -> list[Fact]:
        await self._learning.settled(session)
        now = process_clock.now() if now is None else now
        mac = ", mac" if self.shared else ""
        sql = (f"SELECT {_COLS}{mac} FROM facts WHERE session = ? AND (expires_at IS NULL OR expires_at > ?) "
               "AND established_at <= ?")
        params: list[Any] = [_kept(session), now, self._present()]
        if predicate is not None:
            sql += " AND predicate = ?"
            params.append(_kept(predicate))
        rows = await self.db.query(sql + " ORDER BY id", params)
        facts = [row_to_fact(r) for r in (self._genuine(session, rows) if self.shared else rows)]
        self.confirmed_tools.note(facts)  # what an engine mirror of the session may be loaded with
        return facts

    async def known_values(self, session: str, values: Iterable[str], now: float | None = None) -> set[str]:
        """Which of these strings are arguments of a valid non-internal fact of the session that the agent
        did not give (an indexed look-up per value; the session's other facts are never read). The agent's
        answers hold the inputs it chose: counted, an id it made up grounded itself (strict symbolic mode)."""
        await self._learning.settled(session)
        now = process_clock.now() if now is None else now
        wanted = sorted({_kept(v) for v in values})
        found: set[str] = set()
        for i in range(0, len(wanted), 500):  # below SQLite's limit of host parameters
            chunk = wanted[i : i + 500]
            # a server store's values count only through a fact a replica of this cluster signed
            cols = f"v.value, {signed_facts.KNOWN_COLS}" if self.shared else "DISTINCT v.value"
            sql = (
                f"SELECT {cols} FROM fact_values v JOIN facts f ON f.session = v.session AND f.fact "
                "= v.fact "
                f"WHERE v.session = ? AND v.value IN ({','.join('?' * len(chunk))}) "
                "AND (f.expires_at IS NULL OR f.expires_at > ?) AND f.established_at <= ? "
                "AND f.provenance <> 'agent'"
            )
            rows = await self.db.query(sql, [_kept(session), *chunk, now, self._present()])
            if self.shared:  # ``fact_values`` is not signed: the value must be an argument of its signed fact
                rows = [r for r in rows if self._genuine(session, [r[1:]]) and argument_of(r)]
            found.update(_back(r[0]) for r in rows)
        return found

    async def delete(self, session: str, fact_texts: list[str], also: tuple[Statement, ...] = ()) -> None:
        """``also``: statements committed in the same transaction (a clear's record: kept_clears.py)."""
        if not fact_texts:
            return
        pairs = [(_kept(session), _kept(t)) for t in fact_texts]
        await self._run(
            [
                Statement("DELETE FROM facts WHERE session = ? AND fact = ?", pairs, many=True),
                Statement("DELETE FROM fact_values WHERE session = ? AND fact = ?", pairs, many=True),
                *also,
            ],
            [session],
        )

    async def forget_read(self, session: str, tool: str, digest: str, fact_texts: list[str]) -> None:
        """Delete observed facts whose latest read is still this one (tool and argument digest): a newer
        answer of the same read no longer says them (``read_sources.py``)."""
        if not fact_texts:
            return
        s, t, d = _kept(session), _kept(tool), _kept(digest)
        await self._run(
            [
                Statement(
                    "DELETE FROM facts WHERE session = ? AND fact = ? AND source_tool = ? "
                    "AND source_digest = ? AND provenance = 'observed'",
                    [(s, _kept(f), t, d) for f in fact_texts], many=True,
                ),
                Statement(
                    "DELETE FROM fact_values WHERE session = ? AND fact = ? AND NOT EXISTS (SELECT 1 FROM "
                    "facts WHERE facts.session = fact_values.session AND facts.fact = fact_values.fact)",
                    [(s, _kept(f)) for f in fact_texts], many=True,
                ),
            ],
            [session],
        )

    async def taught_by(self, session: str, tool: str, digest: str) -> list[str]:
        """The observed facts of the session whose latest read is this one (tool and argument digest), whoever
        read it (replicas on one store)."""
        await self._learning.settled(session)
        rows = await self.db.query(
            "SELECT fact FROM facts WHERE session = ? AND source_tool = ? AND source_digest = ? "
            "AND provenance = 'observed'",
            (_kept(session), _kept(tool), _kept(digest)),
        )
        return [_back(r[0]) for r in rows]

    async def delete_depending_on(self, session: str, context: str) -> list[str]:
        """Delete the facts established through a context (rebinding it makes them meaningless)."""
        await self._learning.settled(session)
        rows = await self.db.query(
            "SELECT fact, contexts FROM facts WHERE session = ? AND contexts != '[]'", (_kept(session),)
        )
        doomed = [_back(f) for f, ctx in rows if context in json.loads(ctx)]
        await self.delete(session, doomed)
        return doomed

    async def purge_expired(self, now: float | None = None) -> int:
        """Delete the facts expired at ``now`` (and their value rows), ``PURGE_BATCH`` at a time: each batch
        is a transaction of its own, so the writes queued meanwhile (what calls learn) wait for one batch,
        not for the whole purge. How many facts were deleted."""
        now = process_clock.now() if now is None else now
        self._learning.flush()
        total = 0
        for _ in range(MAX_PURGE_BATCHES):  # bounded even if facts expired at ``now`` kept coming
            results = await self.db.run(
                [Statement(_PURGE_VALUES, (now, PURGE_BATCH)), Statement(_PURGE_FACTS, (now, PURGE_BATCH))]
            )
            deleted = results[1].rowcount or 0
            total += deleted
            if deleted < PURGE_BATCH:
                break
        if self.shared:
            await self._forget_empty_sessions()
        return total

    async def _forget_empty_sessions(self) -> int:
        """Shared store: delete the counters of sessions that hold nothing (a conversation per call left one
        behind forever). Safe against a change racing it: a counter is deleted only while it is the one found,
        and a session changed again gets a new row whose counter no replica can have seen (``_BUMP``), so a
        mirror is never taken for current by mistake. How many rows went."""
        gone = 0
        for _ in range(MAX_PURGE_BATCHES):
            found = await self.db.query(_EMPTY_SESSIONS, (PURGE_BATCH,))
            if not found:
                break
            results = await self.db.run([Statement(_FORGET_SESSION, [tuple(r) for r in found], many=True)])
            gone += sum(r.rowcount or 0 for r in results)
            if len(found) < PURGE_BATCH:
                break
        return gone

    async def sessions(self) -> list[str]:
        await self._learning.settled()
        rows = await self.db.query(
            "SELECT DISTINCT session FROM facts UNION SELECT DISTINCT session FROM contexts ORDER BY 1"
        )
        return [_back(r[0]) for r in rows if r[0] != _kept(KEPT_SCOPE)]  # the kept facts are no conversation

    async def count(self, session: str | None = None) -> int:
        await self._learning.settled(session)
        sql = "SELECT COUNT(*) FROM facts"
        params: tuple[str, ...] = ()
        if session is not None:
            sql, params = sql + " WHERE session = ?", (_kept(session),)
        rows = await self.db.query(sql, params)
        return int(rows[0][0]) if rows else 0

    # ---------------------------------------------------------------- contexts
    async def bind_context(self, session: str, name: str, value: Any) -> None:
        row = (_kept(session), _kept(name), json.dumps(value), time.time())
        if self.shared:  # signed as a fact is: a bound context is read into the mirror as ``$context``
            statement = Statement(signed_facts.BIND, (*row, signed_facts.context_mac(self.key, row)))
        else:
            statement = Statement(
                "INSERT INTO contexts (session, name, value, bound_at) VALUES (?,?,?,?) "
                "ON CONFLICT (session, name) DO UPDATE SET value=excluded.value, bound_at=excluded.bound_at",
                row,
            )
        await self._run([statement], [session])

    async def contexts(self, session: str) -> dict[str, Any]:
        if not self.shared:
            rows = await self.db.query(
                "SELECT name, value FROM contexts WHERE session = ? ORDER BY name", (_kept(session),)
            )
            return {_back(n): json.loads(v) for n, v in rows}
        read = await self.db.query("SELECT session, name, value, bound_at, mac FROM contexts "
                                   "WHERE session = ? ORDER BY name", (_kept(session),))
        kept = [r for r in read if signed_facts.genuine_context(self.key, r)]
        if len(kept) != len(read):
            self.refused += len(read) - len(kept)
            signed_facts.note_refused("context", session, len(read) - len(kept))
        return {_back(r[1]): json.loads(r[2]) for r in kept}

    # ---------------------------------------------------------------- summary
    async def summary(
        self,
        session: str,
        open_askables: list[str] | None = None,
        now: float | None = None,
        max_facts: int = 200,
        shows: Callable[[Fact], bool] | None = None,
    ) -> str:
        """A compact text for an LLM's context: valid facts (those ``shows`` lets through), bound contexts,
        open questions."""
        now = process_clock.now() if now is None else now
        facts = [f for f in await self.valid(session, now) if not f.internal and (shows is None or shows(f))]
        ctx = await self.contexts(session)
        lines = [f"Session {session}: {len(facts)} valid fact(s)."]
        if ctx:
            lines.append("Contexts: " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in ctx.items()))
        else:
            lines.append("Contexts: none bound.")
        for f in facts[:max_facts]:
            ttl = "session" if f.expires_at is None else f"{max(0, int(f.expires_at - now))}s left"
            lines.append(f"  {f.fact}  [{f.provenance}, {ttl}]")
        if len(facts) > max_facts:
            lines.append(f"  ... {len(facts) - max_facts} more")
        if open_askables:
            lines.append("Open questions (answer with sentinel_answer, or ask the user):")
            lines.extend(f"  {q}" for q in open_askables)
        return "\n".join(lines)
