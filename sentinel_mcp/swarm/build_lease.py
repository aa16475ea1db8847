"""Leases of swarm builds in a shared store (several replicas on one PostgreSQL).

A build row carries the replica running it (``replica``), that process's token (``lease_holder``: a restarted
replica with the same name is another holder) and ``lease_until``, renewed by the running process every
``RENEW_EVERY`` seconds. A build whose lease lapsed is **ended, never taken over**: FAILED with
``interrupted: replica <name> stopped``. Why not resumed: its workspace (the files made so far) is on the dead
replica's disk, its model backend may be the caller's own model relayed over a session that died with it, and
the model calls it spent count against its caps; running it again elsewhere would spend them twice.

Ending is one statement a build, conditional on its lease exactly as read and taking its row with ``FOR UPDATE
SKIP LOCKED``, its end signed in it: of two replicas sweeping at once each build is ended by exactly one, and
no reader sees an end before its signature. Times are the database's clock (``clock_timestamp()``), so
replicas whose clocks disagree still agree on a lease. A runner whose renewal finds its lease gone (another
replica ended it while this one could not reach the database) stops the build. A replica restarted under the
same name ends its own earlier builds at start (``end_own_old``), not a lease later.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

from sentinel_mcp.core.display_text import safe_text

log = logging.getLogger(__name__)

LEASE_SECONDS = 30.0  # a build not renewed for this long is taken for dead
RENEW_EVERY = 10.0  # how often a replica renews its builds' leases and sweeps lapsed ones

_NOW = "EXTRACT(EPOCH FROM clock_timestamp())"
REASON_PREFIX = "interrupted: replica "


def new_holder(replica: str) -> str:
    """This process's lease token: the replica's name and a random part (a restart is a new holder)."""
    return f"{replica}/{secrets.token_hex(6)}"


async def renew(db: Any, task_ids: list[str], holder: str, seconds: float = LEASE_SECONDS, *,
                key: bytes | None = None, replica: str | None = None) -> set[str]:
    """Extend the leases of this holder's running builds, each signed anew (``build_rows.lease_mac``; ``key``
    None: unsigned, a caller without one); returns the ids still ours (a build missing from it was ended by
    another replica, which cleared its holder: its runner must stop). A build that finished here since its id
    was read (its runner still winding down) is still ours, not lost: only a running row's lease is extended.
    A running build found under another holder was not ended by a sweeper (a sweeper ends the build): its
    lease was moved in SQL, so it is taken back, signed, and said."""
    from sentinel_mcp.storage import Statement
    from sentinel_mcp.swarm.build_rows import end_verified, lease_mac

    if not task_ids:
        return set()
    replica = replica if replica is not None else holder.rpartition("/")[0]
    marks = ", ".join("?" for _ in task_ids)
    found = await db.query(
        f"SELECT task_id, state, lease_holder, {_NOW}, finished_at, end_mac FROM tasks WHERE task_id IN "
        f"({marks})", tuple(task_ids))
    kept: set[str] = set()
    statements = []
    for tid, state, held_by, now, at, end in found:
        if state in ("COMPLETED", "FAILED"):
            ended = {"task_id": tid, "state": state, "finished_at": at, "end_mac": end}
            if held_by == holder and (key is None or end_verified(key, ended)):
                kept.add(tid)  # ended here (its end signed), its runner winding down
            elif held_by == holder:  # a runner's own end is signed: this one was written outside Sentinel
                log.warning("build %s was marked %s outside Sentinel while it ran here (its end not signed): "
                            "stopped; its files are kept", tid, state)
            continue  # ended elsewhere: lost
        if held_by != holder:
            log.warning("build %s: its lease was moved to %s outside Sentinel (no replica does that); taken "
                        "back", tid, safe_text(str(held_by), 80))
        until = float(now) + seconds
        signed = lease_mac(key, tid, replica, holder, until) if key is not None else None
        statements.append(Statement(
            "UPDATE tasks SET replica=?, lease_holder=?, lease_until=?, lease_mac=? WHERE task_id=? "
            "AND lease_holder=? AND state NOT IN ('COMPLETED','FAILED') RETURNING task_id",
            (replica, holder, until, signed, tid, held_by)))
    if statements:
        for out in await db.run(statements):
            kept.update(r[0] for r in out.rows)
    return kept


# the running rows a sweep may end, read with the database's clock (``_end``: each ended conditionally on it)
_READ = f"SELECT task_id, replica, lease_holder, lease_until, lease_mac, {_NOW} FROM tasks "
# ending one build FAILED: conditional on its lease exactly as read (holder, replica, until, signature), so a
# renewal in between keeps it running, and of sweepers at once exactly one ends it (a row another holds the
# lock of is skipped, never waited for: no deadlock with a renewal's batch); its end's signature written in it
_END = (
    "UPDATE tasks t SET state='FAILED', error=?, error_mac=?, updated_at=?, finished_at=?, end_mac=?, "
    "lease_until=NULL, lease_holder='' FROM (SELECT task_id FROM tasks WHERE task_id=? "
    "AND replica IS NOT DISTINCT FROM ? AND lease_holder IS NOT DISTINCT FROM ? "
    "AND lease_until IS NOT DISTINCT FROM ? AND lease_mac IS NOT DISTINCT FROM ? "
    "AND state NOT IN ('COMPLETED','FAILED') FOR UPDATE SKIP LOCKED) o WHERE t.task_id = o.task_id "
)


async def _end(db: Any, key: bytes | None, rows: list[Any], why: str,
               extra: str = "") -> list[tuple[str, str]]:
    """End these builds (rows as ``_READ`` gives them) FAILED with ``interrupted: replica <name> <why>``, each
    in one statement with its end and its reason signed (``build_rows.end_mac``) when its lease was signed by
    its holder (``build_rows.lease_verified``): a reader never sees an end before its signature. A lease moved
    or made to lapse in SQL (or from before leases were signed) ends unsigned: its files are kept, never swept
    for it, and said. No key (a caller without one): unsigned alike. Returns ``(task_id, replica)`` ended."""
    from sentinel_mcp.storage import Statement
    from sentinel_mcp.swarm.build_progress import ERROR
    from sentinel_mcp.swarm.build_rows import end_mac, lease_verified
    from sentinel_mcp.swarm.signed_parts import mac as part_mac

    statements = []
    for tid, replica, holder, until, mac, now in sorted(rows, key=lambda r: str(r[0])):
        at = float(now)
        error = f"{REASON_PREFIX}{replica or '(unknown)'} {why}"
        lease = {"task_id": tid, "replica": replica, "lease_holder": holder, "lease_until": until,
                 "lease_mac": mac}
        signed = key is not None and lease_verified(key, lease)
        if key is not None and not signed:  # its reason unsigned too: shown as ``unverified``
            log.warning("build %s ended without a signed end: its lease was not signed by its holder (moved "
                        "or set to lapse outside Sentinel, or from before leases were signed); its files are "
                        "kept", safe_text(str(tid), 80))
        end = end_mac(key, tid, "FAILED", at) if signed and key is not None else None
        error_mac = part_mac(key, ERROR, (tid,), (error,)) if signed and key is not None else None
        statements.append(Statement(
            _END + extra + "RETURNING t.task_id, t.replica",
            (error, error_mac, at, at, end, tid, replica, holder, until, mac)))
    if not statements:
        return []
    return [(str(r[0]), str(r[1])) for out in await db.run(statements) for r in out.rows]


async def end_lapsed(db: Any, limit: int = 100, key: bytes | None = None) -> list[tuple[str, str]]:
    """End (FAILED, with the reason) builds whose lease lapsed; each is ended by exactly one caller in the
    cluster (its end signed with ``key`` when its lease was, ``_end``). Returns ``(task_id, replica)`` of the
    builds this call ended."""
    rows = await db.query(
        _READ + f"WHERE state NOT IN ('COMPLETED','FAILED') AND lease_until < {_NOW} ORDER BY lease_until "
        "LIMIT ?", (limit,))
    return await _end(db, key, rows, "stopped (its lease lapsed); the build was not resumed",
                      f"AND t.lease_until < {_NOW} ")


async def end_own_old(db: Any, replica: str, holder: str, limit: int = 1000,
                      key: bytes | None = None) -> list[str]:
    """At start: end the builds an earlier process of this replica left running (same name, another holder),
    at once, without waiting for their leases to lapse: this process knows their runner is gone (the end
    signed when the lease was: a build moved to this replica's name in SQL ends unsigned, its files kept)."""
    rows = await db.query(
        _READ + "WHERE state NOT IN ('COMPLETED','FAILED') AND replica = ? AND lease_holder <> ? "
        "ORDER BY task_id LIMIT ?", (replica, holder, limit))
    ended = await _end(db, key, rows, "restarted while the build ran; the build was not resumed")
    return [tid for tid, _ in ended]


async def release(db: Any, task_id: str, holder: str) -> None:
    """A build that ended here gives its lease up (nothing for a sweeper to find)."""
    await db.write("UPDATE tasks SET lease_until=NULL WHERE task_id=? AND lease_holder=?", (task_id, holder))
