"""The agent's runs and their steps (``<data_dir>/agent.db``, or the PostgreSQL store replicas share), so a
console can show them later (with replicas: any replica's console, whichever replica ran the agent).

Behind the storage seam (``SeamStore``): its schema is migrated there, every write is committed (group
commit, ``synchronous=FULL``) before it returns, and a store that cannot be written refuses. Each step is
written *before* its tool call is made and updated with the outcome after; if the write fails the run stops
(records before effects). Runs belong to the principal that started them; listings are per principal.
Old runs are dropped beyond ``keep`` (with their steps and reflections) so the file stays bounded. Shared
(rollback journal): every gateway on a data dir runs its agent over the same file.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Callable

from sentinel_mcp.agent import trace_rows
from sentinel_mcp.agent.personal_steps import unheld, withheld_reason, withheld_step
from sentinel_mcp.core.errors import AgentError
from sentinel_mcp.storage import Schema, Statement
from sentinel_mcp.storage.row_signature import PROCESS_KEY
from sentinel_mcp.storage.store import SeamStore

# version 1 is the file the agent kept before the seam (its tables unchanged, so an old agent.db just
# gains the seam's version row); the steps and reflections of a dropped run are deleted with it explicitly
# (the seam does not turn on SQLite's foreign keys, so ON DELETE CASCADE is not relied on)
_SQLITE = """
CREATE TABLE IF NOT EXISTS agent_runs (
    run_id TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    session TEXT NOT NULL,
    goal TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    answer TEXT,
    started REAL NOT NULL,
    finished REAL,
    steps INTEGER NOT NULL DEFAULT 0,
    tokens INTEGER NOT NULL DEFAULT 0,
    model TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS agent_runs_by_principal ON agent_runs (principal, started);
CREATE TABLE IF NOT EXISTS agent_steps (
    run_id TEXT NOT NULL REFERENCES agent_runs (run_id) ON DELETE CASCADE,
    n INTEGER NOT NULL,
    at REAL NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (run_id, n)
);
CREATE TABLE IF NOT EXISTS agent_reflections (
    run_id TEXT NOT NULL REFERENCES agent_runs (run_id) ON DELETE CASCADE,
    n INTEGER NOT NULL,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    signs TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS agent_reflections_by_run ON agent_reflections (run_id, n)
"""
# replicas on one PostgreSQL keep their agents' runs in it, so any replica's console shows them: the same
# tables (SQLite's REAL is PostgreSQL's DOUBLE PRECISION)
_POSTGRES = _SQLITE.replace(" REAL", " DOUBLE PRECISION")
# reflections keep the order they were written in (SQLite's rowid did that; PostgreSQL has none)
_SEQ = "ALTER TABLE agent_reflections ADD COLUMN seq INTEGER"
# each row signed by the replica that wrote it (``trace_rows.py``; checked on a server store only)
_MAC = ("ALTER TABLE agent_runs ADD COLUMN mac TEXT; ALTER TABLE agent_steps ADD COLUMN mac TEXT; "
        "ALTER TABLE agent_reflections ADD COLUMN mac TEXT")
SCHEMA = Schema("agent", {"sqlite": [_SQLITE, _SEQ, _MAC], "postgres": [_POSTGRES, _SEQ, _MAC]})
_RUN_SIGNED = ", ".join(trace_rows.RUN_SIGNED)
RUN_FIELDS = (
    "run_id",
    "principal",
    "session",
    "goal",
    "status",
    "reason",
    "answer",
    "started",
    "finished",
    "steps",
    "tokens",
    "model",
)
# the runs older than the newest ``keep`` (their steps and reflections go first, in the same transaction);
# written for both backends (SQLite's "LIMIT -1" is not PostgreSQL's)
_OLD_RUNS = (
    "SELECT run_id FROM agent_runs WHERE started < "
    "(SELECT started FROM agent_runs ORDER BY started DESC LIMIT 1 OFFSET ?)"
)
_TRIM = (
    f"DELETE FROM agent_steps WHERE run_id IN ({_OLD_RUNS})",
    f"DELETE FROM agent_reflections WHERE run_id IN ({_OLD_RUNS})",
    f"DELETE FROM agent_runs WHERE run_id IN ({_OLD_RUNS})",
)


class TraceStoreError(AgentError):
    """The trace could not be written: the run must stop (nothing acts without its record)."""


class TraceStore(SeamStore):
    schema = SCHEMA
    database_name = "agent"

    def __init__(self, path: Path | str, keep: int = 500, key: bytes | None = None) -> None:
        """``key``: what the rows are signed with (a server store: the cluster's ``SharedStore.key("agent
        trace")``; None: this process's own, so only its own runs are shown there)."""
        super().__init__(path)
        self.keep = keep
        self.key = key if key is not None else PROCESS_KEY
        # told (principal, run_id) after every write: the console's live trace page listens (must not block)
        self.listeners: list[Callable[[str, str], None]] = []
        self._owners: dict[str, str] = {}  # run_id -> principal, of runs still being written

    def not_open(self) -> Exception:
        return TraceStoreError("the agent trace store is not open")

    def _tell(self, run_id: str) -> None:
        principal = self._owners.get(run_id)
        for listener in list(self.listeners):
            try:
                listener(principal or "", run_id)
            except Exception:  # noqa: BLE001 - a viewer's hook never stops a run
                pass

    async def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        try:
            await self.db.write(sql, params)
        except Exception as e:  # noqa: BLE001 - a fault, a closed store or a refused row: the run stops
            raise TraceStoreError(f"the agent trace could not be written: {e}") from None

    def _run_ok(self, row: tuple[Any, ...]) -> bool:
        """Whether a run row read as ``_RUN_SIGNED, mac`` is signed (always, on a SQLite file)."""
        return not self.shared or trace_rows.run_signed(self.key, row[6], row[:6])

    async def _signed_run(self, run_id: str) -> tuple[Any, ...] | None:
        """The run's signed columns and mac, if it is signed by this cluster."""
        rows = await self.db.query(f"SELECT {_RUN_SIGNED}, mac FROM agent_runs WHERE run_id = ?", (run_id,))
        return rows[0] if rows and self._run_ok(rows[0]) else None

    def _resign(self, run: tuple[Any, ...], reason: Any, answer: Any, goal: Any = None) -> tuple[str, Any]:
        """The run's new (reason, answer) signature from its verified row; ``goal`` when that changes too."""
        new = (*run[:3], run[3] if goal is None else goal, reason, answer)
        return trace_rows.run_mac(self.key, new), run[6]

    async def start_run(self, run_id: str, principal: str, session: str, goal: str, model: str) -> None:
        mac = trace_rows.run_mac(self.key, (run_id, principal, session, goal, "", None))
        await self._write(
            "INSERT INTO agent_runs (run_id, principal, session, goal, status, started, model, mac) "
            "VALUES (?, ?, ?, ?, 'running', ?, ?, ?)",
            (run_id, principal, session, goal, time.time(), model, mac),
        )
        self._owners[run_id] = principal
        self._tell(run_id)
        try:  # bounded: the oldest runs (and their steps) go
            await self.db.run([Statement(sql, (max(0, self.keep - 1),)) for sql in _TRIM])
        except Exception:  # noqa: BLE001 - trimming is housekeeping; the run's own record is already on disk
            pass

    async def record_step(self, run_id: str, n: int, record: dict[str, Any]) -> None:
        raw = json.dumps(record, default=str, ensure_ascii=False)
        await self._write(
            "INSERT INTO agent_steps (run_id, n, at, record, mac) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id, n) DO UPDATE SET at = excluded.at, record = excluded.record, "
            "mac = excluded.mac",
            (run_id, n, time.time(), raw, trace_rows.step_mac(self.key, run_id, n, raw)),
        )
        self._tell(run_id)

    async def record_reflection(
        self, run_id: str, n: int, kind: str, signs: list[str], text: str
    ) -> dict[str, Any]:
        """A reflection (``reflection``, ``replan``, ``retry``, ``slow``) with its UTC time, on disk before
        the
        loop goes on; the run record lists them under ``reflections`` (the console's trace shows them)."""
        at = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        row = {"n": n, "at": at, "kind": kind, "signs": signs, "text": text}
        said = json.dumps(signs, ensure_ascii=False)
        mac = trace_rows.reflection_mac(self.key, run_id, n, at, kind, said, text)
        await self._write(
            "INSERT INTO agent_reflections (run_id, n, at, kind, signs, text, mac, seq) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, "
            "(SELECT COALESCE(MAX(seq), 0) + 1 FROM agent_reflections WHERE run_id = ?))",
            (run_id, n, at, kind, said, text, mac, run_id),
        )
        return row

    async def finish_run(
        self, run_id: str, status: str, reason: str, answer: str | None, steps: int, tokens: int
    ) -> None:
        run = await self._signed_run(run_id)
        if run is None:  # not this cluster's row (or gone): its end is not written over it
            raise TraceStoreError("the agent trace could not be written: its run row is not this store's own")
        mac, was = self._resign(run, reason, answer)
        await self._write(
            "UPDATE agent_runs SET status = ?, reason = ?, answer = ?, finished = ?, steps = ?, "
            "tokens = ?, mac = ? WHERE run_id = ? AND mac IS NOT DISTINCT FROM ?",
            (status, reason, answer, time.time(), steps, tokens, mac, run_id, was),
        )
        self._tell(run_id)
        self._owners.pop(run_id, None)

    async def scrub_run(self, run_id: str, scrub: Callable[[Any], Any]) -> None:
        """Rewrite what the run has kept so far (goal, reason, answer, steps, reflections) through ``scrub``
        (``typed_secrets``): in one transaction, before the run goes on."""
        try:
            writes = []
            run = await self._signed_run(run_id)
            if run is not None:  # only this cluster's rows are rewritten (and signed anew)
                goal, reason, answer = scrub(run[3]), scrub(run[4]), scrub(run[5])
                mac, was = self._resign(run, reason, answer, goal)
                writes.append(Statement(
                    "UPDATE agent_runs SET goal = ?, reason = ?, answer = ?, mac = ? WHERE run_id = ? "
                    "AND mac IS NOT DISTINCT FROM ?", (goal, reason, answer, mac, run_id, was)))
            for n, raw in await self._steps(run_id):
                new = json.dumps(scrub(json.loads(raw)), default=str, ensure_ascii=False)
                writes.append(Statement(
                    "UPDATE agent_steps SET record = ?, mac = ? WHERE run_id = ? AND n = ?",
                    (new, trace_rows.step_mac(self.key, run_id, n, new), run_id, n)))
            for seq, n, at, kind, signs, text in await self._reflections(run_id):
                said, new = json.dumps(scrub(json.loads(signs)), ensure_ascii=False), scrub(text)
                writes.append(Statement(
                    "UPDATE agent_reflections SET signs = ?, text = ?, mac = ? WHERE run_id = ? AND seq = ?",
                    (said, new, trace_rows.reflection_mac(self.key, run_id, n, at, kind, said, new), run_id,
                     seq)))
            await self.db.run(writes)
        except Exception as e:  # noqa: BLE001 - a password that cannot be taken out stops the run
            raise TraceStoreError(f"the agent trace could not be rewritten: {e}") from None
        self._tell(run_id)

    async def _unheld_steps(self, principal: str, held: frozenset[str], run_id: str | None = None
                            ) -> dict[str, dict[int, dict[str, Any]]]:
        """The principal's steps (of one run, or all) that read a kind ``held`` does not hold: run_id -> n ->
        the step without what it read."""
        one = "" if run_id is None else " AND s.run_id = ?"
        rows = await self.db.query(
            "SELECT s.run_id, s.n, s.record, s.mac, "
            + ", ".join(f"r.{c}" for c in trace_rows.RUN_SIGNED) + ", r.mac "
            "FROM agent_steps s JOIN agent_runs r ON r.run_id = s.run_id "
            f"WHERE r.principal = ? AND s.record LIKE ?{one}",
            (principal, '%"personal": [%', *(() if run_id is None else (run_id,))),
        )
        found: dict[str, dict[int, dict[str, Any]]] = {}
        for rid, n, raw, mac, *run in rows:
            if not self._run_ok(tuple(run)) or not self._step_ok(mac, rid, n, raw):
                continue  # not this cluster's: never shown, never rewritten (nor signed anew)
            record = json.loads(raw)
            gone = unheld(record.get("personal"), held) if isinstance(record, dict) else ["unknown"]
            if gone:
                found.setdefault(rid, {})[n] = withheld_step(record if isinstance(record, dict) else {}, gone)
        return found

    async def withhold(self, principal: str, held: frozenset[str] | None) -> None:
        """Rewrite on disk the principal's steps and runs that read personal data of a kind ``held`` no longer
        holds (``personal_steps``): what they read goes, what ran stays. None holds every kind."""
        if held is None:
            return
        changed: dict[str, list[str]] = {}
        writes: list[Statement] = []
        for run_id, steps in (await self._unheld_steps(principal, held)).items():
            for n, step in steps.items():
                raw = json.dumps(step, ensure_ascii=False)
                writes.append(Statement(
                    "UPDATE agent_steps SET record = ?, mac = ? WHERE run_id = ? AND n = ?",
                    (raw, trace_rows.step_mac(self.key, run_id, n, raw), run_id, n)))
            changed[run_id] = _gone(steps)
        for run_id, gone in changed.items():
            # the answer and reason were written from what the run read; its reflections quote its calls
            run = await self._signed_run(run_id)
            if run is not None:
                mac, was = self._resign(run, withheld_reason(gone), None)
                writes.append(Statement(
                    "UPDATE agent_runs SET answer = NULL, reason = ?, mac = ? WHERE run_id = ? "
                    "AND mac IS NOT DISTINCT FROM ?", (withheld_reason(gone), mac, run_id, was)))
            for seq, n, at, kind, _, _ in await self._reflections(run_id):
                writes.append(Statement(
                    "UPDATE agent_reflections SET signs = '[]', text = ?, mac = ? WHERE run_id = ? "
                    "AND seq = ?",
                    ("withheld", trace_rows.reflection_mac(self.key, run_id, n, at, kind, "[]", "withheld"),
                     run_id, seq)))
        if writes:
            try:
                await self.db.run(writes)
            except Exception as e:  # noqa: BLE001 - a trace that cannot be cleaned is not shown
                raise TraceStoreError(f"the agent trace could not be rewritten: {e}") from None

    async def runs(self, principal: str, limit: int = 20, held: frozenset[str] | None = None, *,
                   shown: frozenset[str] | None = None) -> list[dict[str, Any]]:
        """The principal's latest runs (what they read of a kind ``held`` no longer holds taken out, on disk
        too; of a kind ``shown`` does not hold, left out of this answer only)."""
        await self.withhold(principal, held)
        rows = await self.db.query(
            f"SELECT {', '.join(RUN_FIELDS)}, {_RUN_SIGNED}, mac FROM agent_runs WHERE principal = ? "
            "ORDER BY started DESC LIMIT ?",
            (principal, max(1, min(limit, 200))),
        )
        width = len(RUN_FIELDS)
        runs = [dict(zip(RUN_FIELDS, row)) for row in rows if self._run_ok(row[width:])]
        hidden = {} if shown is None else await self._unheld_steps(principal, shown)
        for run in runs:
            if run["run_id"] in hidden:
                run |= {"answer": None, "reason": withheld_reason(_gone(hidden[run["run_id"]]))}
        return runs

    async def run(self, principal: str, run_id: str, held: frozenset[str] | None = None, *,
                  shown: frozenset[str] | None = None) -> dict[str, Any] | None:
        """One run with its steps, if it belongs to ``principal`` (what it read of a kind ``held`` no longer
        holds taken out, on disk too; of a kind ``shown`` does not hold, left out of this answer only: a
        consent held for another purpose than the reader's stays on disk)."""
        await self.withhold(principal, held)
        rows = await self.db.query(
            f"SELECT {', '.join(RUN_FIELDS)}, {_RUN_SIGNED}, mac FROM agent_runs WHERE run_id = ? "
            "AND principal = ?",
            (run_id, principal),
        )
        if not rows or not self._run_ok(rows[0][len(RUN_FIELDS):]):
            return None
        out = dict(zip(RUN_FIELDS, rows[0]))
        steps = await self.db.query(
            "SELECT n, at, record, mac FROM agent_steps WHERE run_id = ? ORDER BY n", (run_id,)
        )
        out["trace"] = [{"n": n, "at": at, **json.loads(record)} for n, at, record, mac in steps
                        if self._step_ok(mac, run_id, n, record)]
        out["reflections"] = [
            {"n": n, "at": at, "kind": kind, "signs": json.loads(signs), "text": text}
            for _, n, at, kind, signs, text in await self._reflections(run_id)
        ]
        hidden = {} if shown is None else (await self._unheld_steps(principal, shown, run_id)).get(run_id)
        if hidden:  # as withhold rewrites a run on disk, for this answer only
            out |= {"answer": None, "reason": withheld_reason(_gone(hidden))}
            out["trace"] = [{"n": s["n"], "at": s["at"], **hidden[s["n"]]} if s["n"] in hidden else s
                            for s in out["trace"]]
            out["reflections"] = [r | {"signs": [], "text": "withheld"} for r in out["reflections"]]
        return out


    def _step_ok(self, mac: Any, run_id: Any, n: Any, record: Any) -> bool:
        return not self.shared or trace_rows.step_signed(self.key, mac, run_id, n, record)

    async def _steps(self, run_id: str) -> list[tuple[Any, ...]]:
        """(n, record) of the run's steps this cluster signed."""
        rows = await self.db.query("SELECT n, record, mac FROM agent_steps WHERE run_id = ?", (run_id,))
        return [(n, raw) for n, raw, mac in rows if self._step_ok(mac, run_id, n, raw)]

    async def _reflections(self, run_id: str) -> list[tuple[Any, ...]]:
        """(seq, n, at, kind, signs, text) of the run's reflections this cluster signed, in order."""
        rows = await self.db.query(
            "SELECT seq, n, at, kind, signs, text, mac FROM agent_reflections WHERE run_id = ? "
            "ORDER BY seq, n, at", (run_id,))
        return [r[:6] for r in rows
                if not self.shared or trace_rows.reflection_signed(self.key, r[6], run_id, *r[1:6])]


def _gone(steps: dict[int, dict[str, Any]]) -> list[str]:
    """The kinds the withheld steps of one run read."""
    return sorted({k for step in steps.values() for k in step["withheld"]["kinds"]})
