"""A build's row on a server store (``tasks``), signed over what binds it to its owner (``storage/
row_signature.py``; the cluster's key "swarm build").

A build's files live on its replica's disk under its id, and a replica shows a build (and its files) to the
principal its row names. Unsigned, anyone who could write the database without the seal key could move a
build to another principal in SQL (bob's build and files shown to alice), or plant builds under a name.
Signed, written once when the build is created and never changed: the id, principal, conversation, backend
and spec. A row that fails the check is nobody's: not opened, listed, counted among a principal's unfinished
or kept builds.

Not signed: what changes as the build runs (state, plan, report, counters, error, lease), written by several
statements of the runner and the sweepers; such a writer can end a build early or mark it FAILED (its
workspace is then swept once past retention), and a row it plants still counts in SQL against the
principal's hourly cap and its one unfinished build (the database's own checks). Rows from before this
change are unsigned: no longer shown (their files stay on disk).
"""

from __future__ import annotations

from typing import Any, Mapping

from sentinel_mcp.storage.row_signature import sign, signed

PURPOSE = "swarm build"
COLUMNS = ("task_id", "principal", "session", "backend", "spec_json")


def mac(key: bytes, task_id: str, principal: str, session: str, backend: str, spec_json: str) -> str:
    return sign(key, PURPOSE, task_id, principal, session, backend, spec_json)


def verified(key: bytes, row: Mapping[str, Any]) -> bool:
    """Whether a row read whole (``SELECT *``, as a mapping) carries the signature of its binding."""
    return signed(key, row.get("mac"), PURPOSE, *(row.get(c) for c in COLUMNS))
