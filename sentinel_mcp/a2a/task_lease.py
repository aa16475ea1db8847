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

Ending is a conditional ``UPDATE`` per task (``task_journal``: on the revision and signature of the row read
and verified, its lease still lapsed), the new row signed (``task_rows.py``), so of two replicas sweeping at
once each task is ended by exactly one, and a lease renewed meanwhile keeps its task. It clears
``lease_holder``: every later write
of the replica that lost it (``task_journal``'s upserts are guarded by the holder) changes nothing, so a late
"COMPLETED" never overwrites why the task ended. A replica restarted under the same name ends its own old
running tasks at start, without waiting for their leases to lapse (``end_own_old``): it knows they are dead.
"""

from __future__ import annotations

import secrets
import uuid
from typing import Any

from sentinel_mcp.a2a.protocol import Message, Part, Task, TaskStatus, now_iso

LEASE_SECONDS = 30.0  # a running task not renewed for this long is taken for dead
RENEW_EVERY = 10.0  # how often a replica renews its tasks' leases and sweeps lapsed ones

CANCEL_POLL = 0.5  # how often a replica running tasks looks for cancels asked through other replicas
CANCEL_WAIT = 10.0  # how long a cancel asked through another replica waits to see the task end

NOW = "EXTRACT(EPOCH FROM clock_timestamp())"
NOW_TEXT = "CAST(clock_timestamp() AS TEXT)"
RUNNING = "('TASK_STATE_SUBMITTED','TASK_STATE_WORKING')"
REASON_PREFIX = "interrupted: replica "
LAPSED = (
    " stopped while this task ran (its lease lapsed); it was not run again: its tool call may "
    "already have been forwarded"
)
RESTARTED = (
    " restarted while this task ran; it was not run again: its tool call may already have been forwarded"
)


def new_holder(replica: str) -> str:
    """This process's lease token: the replica's name and a random part (a restart is a new holder)."""
    return f"{replica}/{secrets.token_hex(6)}"


def ended(record: Any, tail: str) -> Task:
    """The task of ``record`` (a ``TaskRecord`` read from the store and verified) ended FAILED with the reason
    naming its replica: the status and the history say the same (the row is written, signed, from this)."""
    task = record.task
    note = Message(
        message_id=str(uuid.uuid4()),
        context_id=task.context_id,
        task_id=task.id,
        role="ROLE_AGENT",
        parts=[Part.of_text(REASON_PREFIX + (record.replica or "(unknown)") + tail)],
    )
    status = TaskStatus(state="TASK_STATE_FAILED", message=note, timestamp=now_iso())  # type: ignore[arg-type]
    return task.model_copy(update={"status": status, "history": [*(task.history or []), note]})


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
