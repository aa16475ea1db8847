"""The facts and bound contexts replicas share, signed by the replica that wrote them.

A row of ``facts`` decides calls on every replica: a ``user`` answer, a ``$confirmed`` marker (the user's
"yes" to one call), what a read returned. Anyone who can write the shared database but does not hold
``sentinel.cluster.seal_key`` (a replica's database credentials, a DBA, an injected statement elsewhere) could
otherwise write such a row and a guard would allow a call the user never approved. So each row carries a MAC
(``storage/row_signature.py``, key ``SharedStore.key("facts")``) over every column a reader acts on: session
(a conversation is one principal's), predicate, arguments, fact text, provenance, the call it came from, the
contexts it stood on, when it was established and when it expires. A row made up, copied to another
session, predicate or call, whose provenance or expiry was changed, or signed with another key, is absent to
every reader (counted in ``FactStore.refused`` and logged), never an error. Rows from before signing are
unsigned: absent too (a question is asked again, a read fetched again).

Only a server store signs: a SQLite store is one process's file (nothing here a writer of that file lacks).
What a signature cannot stop: a writer who kept a copy of a real row can put it back after it was deleted
(a spent confirmation, until its signed expiry), or delete rows (the user is asked again)."""

from __future__ import annotations

import logging
from typing import Any, Sequence

from sentinel_mcp.storage.row_signature import sign_row, signed_row

log = logging.getLogger(__name__)

FACT = "fact"  # one purpose per kind of row: a context's signature never stands for a fact's
CONTEXT = "fact context"

FACT_COLS = (
    "session, predicate, args, fact, provenance, source_tool, source_digest, contexts, "
    "established_at, expires_at"
)
INSERT = f"INSERT INTO facts ({FACT_COLS}, mac)"
ON_FACT = (
    " ON CONFLICT (session, fact) DO UPDATE SET provenance=excluded.provenance, "
    "source_tool=excluded.source_tool, source_digest=excluded.source_digest, contexts=excluded.contexts, "
    "established_at=excluded.established_at, expires_at=excluded.expires_at, args=excluded.args, "
    "mac=excluded.mac"
)
UPSERT = f"{INSERT} VALUES (?,?,?,?,?,?,?,?,?,?,?){ON_FACT}"
BIND = (
    "INSERT INTO contexts (session, name, value, bound_at, mac) VALUES (?,?,?,?,?) "
    "ON CONFLICT (session, name) DO UPDATE SET value=excluded.value, bound_at=excluded.bound_at, "
    "mac=excluded.mac"
)
# the fact's own columns next to a value of ``fact_values`` (strict symbolic mode): a value is known only
# through a genuine fact
KNOWN_COLS = ", ".join(f"f.{c.strip()}" for c in FACT_COLS.split(",")) + ", f.mac"


def signed(key: bytes, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The facts table's rows (as stored) with their MAC appended."""
    return [(*r, sign_row(key, FACT, r)) for r in rows]


def genuine(key: bytes, row: Sequence[Any]) -> bool:
    """A facts row as read, its MAC last."""
    return signed_row(key, row[-1], FACT, row[:-1])


def context_mac(key: bytes, row: Sequence[Any]) -> str:
    return sign_row(key, CONTEXT, row)


def genuine_context(key: bytes, row: Sequence[Any]) -> bool:
    """A contexts row as read: session, name, value, bound_at, mac."""
    return signed_row(key, row[-1], CONTEXT, row[:-1])


def note_refused(kind: str, session: str, n: int) -> None:
    if n:
        log.warning("%d %s row(s) of session %r not signed by a replica of this cluster: ignored "
                    "(written in the database by someone without the seal key, or before signing)",
                    n, kind, session[:200])
