"""Leases of A2A tasks in a shared store (several replicas on one PostgreSQL).

A task row carries the replica that runs it (``replica``), that process's token (``lease_holder``: a restarted
replica with the same name is another holder) and, while it runs (SUBMITTED, WORKING), ``lease_until``:
renewed
by the running process every ``RENEW_EVERY`` seconds, on the database's clock (replicas whose clocks disagree
still agree on a lease).

A running task whose lease lapsed is **ended, never taken over**: FAILED, saying which replica stopped. Why
not resumed: its work is one guarded tool call that may already have been forwarded upstream when the replica
died, and its result was never recorded; running it again elsewhere could run it twice. The caller sees the
reason and may send it again as a new task, knowingly.

Ending is one statement: ``UPDATE ... FROM (SELECT ... FOR UPDATE SKIP LOCKED) ... RETURNING``, so of two
replicas sweeping at once each task is ended by exactly one. It clears ``lease_holder``: every later write
of the replica that lost it (``task_journal``'s upserts are guarded by the holder) changes nothing, so a late
"COMPLETED" never overwrites why the task ended. A replica restarted under the same name ends its own old
running tasks at start, without waiting for their leases to lapse (``end_own_old``): it knows they are dead.
"""

from __future__ import annotations

import secrets
from typing import Any

LEASE_SECONDS = 30.0  # a running task not renewed for this long is taken for dead
RENEW_EVERY = 10.0  # how often a replica renews its tasks' leases and sweeps lapsed ones

CANCEL_POLL = 0.5  # how often a replica running tasks looks for cancels asked through other replicas
CANCEL_WAIT = 10.0  # how long a cancel asked through another replica waits to see the task end

NOW = "EXTRACT(EPOCH FROM clock_timestamp())"
NOW_TEXT = "CAST(clock_timestamp() AS TEXT)"
_NOW_ISO = "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
RUNNING = "('TASK_STATE_SUBMITTED','TASK_STATE_WORKING')"
REASON_PREFIX = "interrupted: replica "
_LAPSED = (
    " stopped while this task ran (its lease lapsed); it was not run again: its tool call may "
    "already have been forwarded"
)
_RESTARTED = (
    " restarted while this task ran; it was not run again: its tool call may already have been forwarded"
)


def new_holder(replica: str) -> str:
    """This process's lease token: the replica's name and a random part (a restart is a new holder)."""
    return f"{replica}/{secrets.token_hex(6)}"


def _end(where: str, tail: str) -> str:
    """End the chosen running tasks FAILED with the reason (rewriting the stored task's status and history
    in the same statement, so the row never says two things)."""
    note = (
        "jsonb_build_object('messageId', md5(random()::text || c.id), 'contextId', c.t->'contextId', "
        "'taskId', c.id, 'role', 'ROLE_AGENT', 'parts', jsonb_build_array(jsonb_build_object("
        f"'text', '{REASON_PREFIX}' || CASE WHEN c.replica = '' THEN '(unknown)' ELSE c.replica END || "
        f"'{tail}', 'mediaType', 'text/plain')))"
    )
    return (
        "UPDATE a2a_task SET state='TASK_STATE_FAILED', lease_holder='', lease_until=NULL, pending=NULL, "
        f"updated={_NOW_ISO}, task=(c.t || jsonb_build_object("
        f"'status', jsonb_build_object('state', 'TASK_STATE_FAILED', 'timestamp', {_NOW_ISO}, 'message', "
        f"{note}),"
        f" 'history', COALESCE(c.t->'history', '[]'::jsonb) || jsonb_build_array({note})))::text "
        "FROM (SELECT id, replica, task::jsonb AS t FROM a2a_task "
        f"WHERE state IN {RUNNING} AND {where} ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED) AS c "
        f"WHERE a2a_task.id = c.id AND a2a_task.state IN {RUNNING} RETURNING a2a_task.id, a2a_task.replica"
    )


_END_LAPSED = _end(f"lease_until < {NOW}", _LAPSED)
_END_OWN = _end("replica = ? AND lease_holder <> ?", _RESTARTED)


async def renew(db: Any, task_ids: list[str], holder: str, seconds: float = LEASE_SECONDS) -> set[str]:
    """Extend the leases of the tasks this process runs (one round trip); returns those still its own. One
    missing from it was ended (or taken over) by another replica: its runner must stop. Only the tasks named
    are renewed: a row whose runner ended here without its last write landing (the database was away) lapses,
    never stays "running" for ever.

    "Its own" is the holder, whatever the state: the ids were read while their tasks ran, and one may have
    settled here since (waiting for input, done, or running its next round) before this statement ran. Such
    a row is still this process's and must not be taken for lost (stopping a next round it had just
    started: CANCELED where COMPLETED was due). Only a running row's lease is extended."""
    if not task_ids:
        return set()
    out = await db.write(
        f"UPDATE a2a_task SET lease_until=CASE WHEN state IN {RUNNING} THEN {NOW} + ? ELSE lease_until END "
        "WHERE lease_holder=? AND id = ANY(?) RETURNING id",
        (seconds, holder, list(task_ids)),
    )
    return {r[0] for r in out.rows}


async def end_lapsed(db: Any, limit: int = 100) -> list[tuple[str, str]]:
    """End running tasks whose lease lapsed; each by exactly one caller in the cluster. ``(id, replica)``."""
    out = await db.write(_END_LAPSED, (limit,))
    return [(r[0], r[1]) for r in out.rows]


async def end_own_old(db: Any, replica: str, holder: str, limit: int = 1000) -> list[str]:
    """At start: end the running tasks an earlier process of this replica left (another holder, same name)."""
    out = await db.write(_END_OWN, (replica, holder, limit))
    return [r[0] for r in out.rows]
