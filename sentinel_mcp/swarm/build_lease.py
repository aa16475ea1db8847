"""Leases of swarm builds in a shared store (several replicas on one PostgreSQL).

A build row carries the replica running it (``replica``), that process's token (``lease_holder``: a restarted
replica with the same name is another holder) and ``lease_until``, renewed by the running process every
``RENEW_EVERY`` seconds. A build whose lease lapsed is **ended, never taken over**: FAILED with
``interrupted: replica <name> stopped``. Why not resumed: its workspace (the files made so far) is on the dead
replica's disk, its model backend may be the caller's own model relayed over a session that died with it, and
the model calls it spent count against its caps; running it again elsewhere would spend them twice.

Ending is one atomic statement: ``UPDATE ... WHERE task_id IN (SELECT ... FOR UPDATE SKIP LOCKED) RETURNING``,
so of two replicas sweeping at once each build is ended by exactly one. Times are the database's clock
(``clock_timestamp()``), so replicas whose clocks disagree still agree on a lease. A runner whose renewal
finds
its lease gone (another replica ended it while this one could not reach the database) stops the build. A
replica restarted under the same name ends its own earlier builds at start (``end_own_old``), not a lease
later.
"""

from __future__ import annotations

import secrets
from typing import Any

LEASE_SECONDS = 30.0  # a build not renewed for this long is taken for dead
RENEW_EVERY = 10.0  # how often a replica renews its builds' leases and sweeps lapsed ones

_NOW = "EXTRACT(EPOCH FROM clock_timestamp())"
REASON_PREFIX = "interrupted: replica "


def new_holder(replica: str) -> str:
    """This process's lease token: the replica's name and a random part (a restart is a new holder)."""
    return f"{replica}/{secrets.token_hex(6)}"


async def renew(db: Any, task_ids: list[str], holder: str, seconds: float = LEASE_SECONDS) -> set[str]:
    """Extend the leases of this holder's running builds; returns the ids whose lease is still ours (a build
    missing from it was ended by another replica, which cleared its holder: its runner must stop). A build
    that finished here since its id was read (its runner still winding down) is still ours, not lost: only
    a running row's lease is extended."""
    if not task_ids:
        return set()
    marks = ", ".join("?" for _ in task_ids)
    out = await db.write(
        f"UPDATE tasks SET lease_until=CASE WHEN state NOT IN ('COMPLETED','FAILED') THEN {_NOW} + ? "
        f"ELSE lease_until END WHERE lease_holder=? AND task_id IN ({marks}) RETURNING task_id",
        (seconds, holder, *task_ids),
    )
    return {r[0] for r in out.rows}


async def _sign_ends(db: Any, key: bytes | None, rows: list[Any]) -> None:
    """Sign the ends just written (``build_rows.end_mac``; rows: task_id, state, finished_at as returned).
    One statement after the end: a replica dying between leaves an end unsigned, whose files are then kept
    (never swept), not a sweep on an end nobody vouched for. No key (a caller without one): unsigned alike."""
    from sentinel_mcp.storage import Statement
    from sentinel_mcp.swarm.build_rows import end_mac

    if key is None or not rows:
        return
    sql = "UPDATE tasks SET end_mac=? WHERE task_id=? AND state=? AND finished_at=?"
    await db.run([Statement(sql, (end_mac(key, tid, state, float(at)), tid, state, at))
                  for tid, state, at, *_ in rows])


async def end_lapsed(db: Any, limit: int = 100, key: bytes | None = None) -> list[tuple[str, str]]:
    """End (FAILED, with the reason) builds whose lease lapsed; each is ended by exactly one caller in the
    cluster (its end signed with ``key``, ``build_rows.end_mac``). Returns ``(task_id, replica)`` of the
    builds this call ended."""
    out = await db.write(
        "UPDATE tasks SET state='FAILED', "
        f"error='{REASON_PREFIX}' || CASE WHEN replica = '' THEN '(unknown)' ELSE replica END || "
        "' stopped (its lease lapsed); the build was not resumed', "
        f"updated_at={_NOW}, finished_at={_NOW}, lease_until=NULL, lease_holder='' "
        "WHERE task_id IN (SELECT task_id FROM tasks WHERE state NOT IN ('COMPLETED','FAILED') "
        f"AND lease_until < {_NOW} ORDER BY lease_until LIMIT ? FOR UPDATE SKIP LOCKED) "
        "AND state NOT IN ('COMPLETED','FAILED') RETURNING task_id, state, finished_at, replica",
        (limit,),
    )
    await _sign_ends(db, key, out.rows)
    return [(r[0], r[3]) for r in out.rows]


async def end_own_old(db: Any, replica: str, holder: str, limit: int = 1000,
                      key: bytes | None = None) -> list[str]:
    """At start: end the builds an earlier process of this replica left running (same name, another holder),
    at once, without waiting for their leases to lapse: this process knows their runner is gone."""
    out = await db.write(
        "UPDATE tasks SET state='FAILED', "
        f"error='{REASON_PREFIX}' || replica || ' restarted while the build ran; the build was not resumed', "
        f"updated_at={_NOW}, finished_at={_NOW}, lease_until=NULL, lease_holder='' "
        "WHERE task_id IN (SELECT task_id FROM tasks WHERE state NOT IN ('COMPLETED','FAILED') "
        "AND replica = ? AND lease_holder <> ? ORDER BY task_id LIMIT ? FOR UPDATE SKIP LOCKED) "
        "AND state NOT IN ('COMPLETED','FAILED') RETURNING task_id, state, finished_at",
        (replica, holder, limit),
    )
    await _sign_ends(db, key, out.rows)
    return [r[0] for r in out.rows]


async def release(db: Any, task_id: str, holder: str) -> None:
    """A build that ended here gives its lease up (nothing for a sweeper to find)."""
    await db.write("UPDATE tasks SET lease_until=NULL WHERE task_id=? AND lease_holder=?", (task_id, holder))
