"""The questions the gateway put to conversations, remembered for every replica of a shared store
(``asked_questions.py`` says why they are remembered at all).

A user's answer comes back in a retry that may reach any replica (a 2026-era sealed state opens on all of
them). Remembered only by the replica that asked, the question was unknown where the answer arrived: if the
agent had answered it meanwhile (``sentinel_answer``), the retry's decision asked nothing, and the user's
answer was dropped, so the agent's word decided the call. Each question asked is a row of the cluster's
database, keyed by principal, conversation and question key, and signed (``sentinel.cluster.seal_key``) over
everything a reader acts on: a row made up or altered in SQL (a question never asked, another principal's or
conversation's, other choices) is absent, never used. Bounded per principal (its oldest go first, never
another's) and by age (a question older than a sealed state lives answers nothing). Age is by the database's
clock on PostgreSQL (one clock for every replica), else by the process clock: a wall clock set back kept a
question answerable for the step, and a row stamped later than the reader's clock has an unknown age (none).
A store that cannot be written or read fails the call (the caller refuses it), never drops the user's answer
silently.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.decision import Question
from sentinel_mcp.storage import Schema, Statement, StorageError
from sentinel_mcp.storage.shared_clock import DB_NOW, clocked, on_server_clock
from sentinel_mcp.storage.row_signature import PROCESS_KEY, sign, signed

log = logging.getLogger(__name__)

PURPOSE = "asked question"
_SQL = (
    "CREATE TABLE asked_questions (principal TEXT NOT NULL, session TEXT NOT NULL, qkey TEXT NOT NULL, "
    "question TEXT NOT NULL, asked_at {real} NOT NULL, mac TEXT NOT NULL, PRIMARY KEY (principal, session, "
    "qkey)); CREATE INDEX asked_questions_by_age ON asked_questions (principal, asked_at)"
)
SCHEMA = Schema("asked_questions", {"sqlite": [_SQL.format(real="REAL")],
                                    "postgres": [_SQL.format(real="DOUBLE PRECISION")]})
_UPSERT = (
    "INSERT INTO asked_questions (principal, session, qkey, question, asked_at, mac) VALUES (?,?,?,?,?,?) "
    "ON CONFLICT (principal, session, qkey) DO UPDATE SET question = excluded.question, "
    "asked_at = excluded.asked_at, mac = excluded.mac"
)
# one principal's rows past its bound, oldest first (another principal's are never touched)
_TRIM = (
    "DELETE FROM asked_questions WHERE principal = ? AND (asked_at < ? OR (session, qkey) NOT IN ("
    "SELECT session, qkey FROM asked_questions WHERE principal = ? ORDER BY asked_at DESC LIMIT ?))"
)
CLOCK_SKEW = 5.0  # seconds a replica's clock may run ahead of another's


class SharedAskedQuestions:
    def __init__(self, db: Any, max_age: float, per_principal: int, key: bytes | None = None) -> None:
        self.db, self.max_age, self.per_principal = db, max_age, per_principal
        self.key = key if key is not None else PROCESS_KEY

    @classmethod
    async def open(cls, db: Any, max_age: float, per_principal: int,
                   key: bytes | None = None) -> "SharedAskedQuestions":
        try:
            await db.migrate(SCHEMA)
        except StorageError as e:  # degraded: a call that asks or is answered is refused until it is back
            log.warning("asked questions: the shared store is unavailable at start: %s", e)
        return cls(db, max_age, per_principal, key=key)

    def _mac(self, principal: str, session: str, qkey: str, question: str, asked_at: float) -> str:
        return sign(self.key, PURPOSE, principal, session, qkey, question, repr(float(asked_at)))

    async def remember(self, principal: str, session: str, asked: list[tuple[str, Question]]) -> None:
        """``asked``: (the key it is remembered by, the question)."""
        if not asked:
            return
        now = await self._now()
        rows = []
        for qkey, q in asked:
            text = json.dumps(q.model_dump(), ensure_ascii=True)  # ASCII: any text, a lone surrogate too
            rows.append((principal, session, qkey, text, now, self._mac(principal, session, qkey, text, now)))
        await self.db.run([Statement(_UPSERT, rows, many=True),
                           Statement(_TRIM, (principal, now - self.max_age, principal, self.per_principal))])

    async def _now(self) -> float:
        """The clock a question's age is measured by (``get`` reads the same)."""
        if on_server_clock(self.db):
            return float((await self.db.query(f"SELECT {DB_NOW}"))[0][0])
        return process_clock.now()

    async def forget(self, principal: str, session: str, qkey: str) -> None:
        await self.db.run([Statement(
            "DELETE FROM asked_questions WHERE principal = ? AND session = ? AND qkey = ?",
            (principal, session, qkey))])

    async def get(self, principal: str, session: str, qkey: str) -> Question | None:
        rows = await self.db.query(*clocked(
            self.db, "SELECT question, asked_at, mac, {now} FROM asked_questions WHERE principal = ? "
            "AND session = ? AND qkey = ?", (principal, session, qkey), 0, process_clock.now))
        if not rows:
            return None
        text, asked_at, mac, now = rows[0]
        if not (isinstance(text, str) and isinstance(asked_at, float)
                and signed(self.key, mac, PURPOSE, principal, session, qkey, text, repr(float(asked_at)))):
            log.warning("an asked question's row not signed by a replica of this cluster: ignored")
            return None
        if not isinstance(now, float) or not now - self.max_age - CLOCK_SKEW <= asked_at <= now + CLOCK_SKEW:
            return None  # too old, or stamped in the reader's future (its age unknown: the clock went back)
        try:
            q = Question.model_validate(json.loads(text))
        except ValueError:
            return None
        return q if q.meta.get("kind") == "ask" else None
