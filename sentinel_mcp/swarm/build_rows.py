"""A build's row on a server store (``tasks``), signed over what binds it to its owner (``storage/
row_signature.py``; the cluster's key "swarm build").

A build's files live on its replica's disk under its id, and a replica shows a build (and its files) to the
principal its row names. Unsigned, anyone who could write the database without the seal key could move a
build to another principal in SQL (bob's build and files shown to alice), or plant builds under a name.
Signed, written once when the build is created and never changed: the id, principal, conversation, backend
and spec. A row that fails the check is nobody's: not opened, listed, counted among a principal's unfinished
or kept builds.

A build's end is signed too (``end_mac``: id, state, finished_at), by the replica that ended it (its runner,
or a sweeper ending a lapsed or an old build): what removes files acts only on it (the retention sweep of
FAILED builds past their days, the trim of a principal's kept builds). A build marked FAILED or COMPLETED in
SQL, or an end moved back in time, has no valid end: its files are never swept for it (kept, and said).

A build's accepted step is signed (``step_mac``: id, path, status, the SHA-256 of the file it wrote): that
digest lets a file with a second name be served, so one edited or planted in SQL vouches for nothing.

A build's lease is signed too (``lease_mac``: id, replica, holder, lease_until), by its runner at the build's
creation and at every renewal. A sweeper ending a build (its lease lapsed, or its replica restarted) signs the
end only when the lease it ended was signed: a lease moved to another replica or holder in SQL, or made to
lapse (``lease_until`` set back), ends the build (a sweeper cannot tell a forged lapse from a dead replica)
but without a signed end, so its files are kept and said, never swept for it. A runner whose renewal finds
its running build's lease under another holder (no sweeper does that: a sweeper ends the build) takes it
back, signed, and says so; only a build ended elsewhere is lost.

The progress a runner writes as the build runs (plan, report, counters and warnings, error, each step and
model call with a signed count of each) is signed part by part (``build_progress.py``): shown to the build's
principal, never acted on (every cap is counted in the runner's memory, ``limits.Budget``). The hourly quota
is counted by a signed ledger per principal (``build_quota.py``), so deleting rows gives no more builds. A row
planted in SQL still counts in SQL against the principal's one unfinished build (the database's own check).
Rows from before this change are unsigned: no longer shown (their files stay on disk); builds ended before
``end_mac`` are never swept (``sentinel-mcp swarm gc`` names them).
"""

from __future__ import annotations

from typing import Any, Mapping

from sentinel_mcp.storage.row_signature import sign, sign_row, signed, signed_row

PURPOSE = "swarm build"
COLUMNS = ("task_id", "principal", "session", "backend", "spec_json")
END = "swarm build end"
END_COLUMNS = ("task_id", "state", "finished_at")
STEP = "swarm build step"
LEASE = "swarm build lease"
LEASE_COLUMNS = ("task_id", "replica", "lease_holder", "lease_until")


def mac(key: bytes, task_id: str, principal: str, session: str, backend: str, spec_json: str) -> str:
    return sign(key, PURPOSE, task_id, principal, session, backend, spec_json)


def verified(key: bytes, row: Mapping[str, Any]) -> bool:
    """Whether a row read whole (``SELECT *``, as a mapping) carries the signature of its binding."""
    return signed(key, row.get("mac"), PURPOSE, *(row.get(c) for c in COLUMNS))


def end_mac(key: bytes, task_id: str, state: str, finished_at: float) -> str:
    """The signature of a build's end (its state and when, exactly as the row keeps it)."""
    return sign_row(key, END, (task_id, state, finished_at))


def end_verified(key: bytes, row: Mapping[str, Any]) -> bool:
    """Whether a row read whole carries the signature of its end (an ended state, its time)."""
    return (row.get("state") in ("COMPLETED", "FAILED") and isinstance(row.get("task_id"), str)
            and signed_row(key, row.get("end_mac"), END, [row.get(c) for c in END_COLUMNS]))


def lease_mac(key: bytes, task_id: str, replica: str, holder: str, until: float) -> str:
    """The signature of a build's lease (who holds it, until when: exactly as the row keeps it)."""
    return sign_row(key, LEASE, (task_id, replica, holder, until))


def lease_verified(key: bytes, row: Mapping[str, Any]) -> bool:
    """Whether a lease read (``LEASE_COLUMNS`` and ``lease_mac``, as they were before an end cleared them)
    carries its holder's signature: only then does a sweeper sign the end it writes."""
    return (isinstance(row.get("task_id"), str) and isinstance(row.get("lease_until"), float)
            and signed_row(key, row.get("lease_mac"), LEASE, [row.get(c) for c in LEASE_COLUMNS]))


def step_mac(key: bytes, task_id: str, file_path: str, status: str, sha256: str | None) -> str:
    """The signature of a build's step as far as what is served relies on it: the digest of the file it
    wrote, which lets a file with a second name (a hard link) be served (``workspace.open_file``)."""
    return sign_row(key, STEP, (task_id, file_path, status, sha256))


def step_verified(key: bytes, row: Mapping[str, Any]) -> bool:
    return signed_row(key, row.get("mac"), STEP,
                      [row.get(c) for c in ("task_id", "file_path", "status", "sha256")])
