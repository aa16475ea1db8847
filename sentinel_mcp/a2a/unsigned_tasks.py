"""Running A2A tasks stored before their rows were signed (``task_rows.py``): ended FAILED once their lease
lapsed, keeping nothing of them that no replica can vouch for.

After the upgrade that signed the rows, a row from before (``mac`` empty: the column's default) was refused
for good: a task that was running then stayed WORKING in the store for ever, shown to nobody and ended by no
sweep. Now the sweeper ends such a row like any lapsed task, but it signs only what it writes itself: the id,
owner and conversation columns as they are (what a reader finds it by), the state FAILED and a task whose
history is Sentinel's one message saying why; the old history, artifacts, question and pending call are
dropped, never signed. A row whose lease has not lapsed is left alone (a replica of the version before may
still run it), and so is every row with any other signature (written or edited outside Sentinel: refused as
before). What remains possible for someone who writes the database without the seal key: insert an
unsigned "running" row and have it ended, i.e. a FAILED task with Sentinel's message under an id and owner
of its choosing (bounded in length); nothing it wrote is ever shown or run.
"""

from __future__ import annotations

import uuid
from typing import Any, Sequence

from sentinel_mcp.a2a import task_lease, task_rows
from sentinel_mcp.a2a.protocol import Message, Part, Task, TaskStatus, now_iso
from sentinel_mcp.storage import Statement

REASON = ("this task was stored before Sentinel signed its task rows, and the replica running it is gone; "
          "nothing of it could be vouched for, so it was ended without being run again")
_RUNNING = ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")  # as ``task_lease.RUNNING`` says in SQL
_ID_MAX = 256  # an id or owner longer than any Sentinel or an A2A client makes: not ended, left refused
_END = (
    "UPDATE a2a_task SET state='TASK_STATE_FAILED', updated=?, task=?, pending=NULL, replica=?, "
    "lease_holder='', lease_until=NULL, cancel_asked=NULL, rev=?, mac=? "
    "WHERE id=? AND owner=? AND session_id=? AND rev=? AND mac='' "
    f"AND state IN {task_lease.RUNNING} AND lease_until < {task_lease.NOW} RETURNING id"
)


def from_before(row: Sequence[Any]) -> bool:
    """Whether a row read as ``task_rows.COLUMNS`` carries no signature at all (the column's default)."""
    return len(row) == task_rows.WIDTH + 1 and row[task_rows.WIDTH] == ""


def end(key: bytes, replica: str, row: Sequence[Any]) -> Statement | None:
    """The conditional ``UPDATE`` that ends this unsigned running row FAILED (signed anew, its content
    dropped); None when the row is not one to end (no id, owner or conversation as text, not running)."""
    tid, owner, session, state, rev = row[0], row[1], row[2], row[3], row[9]
    if not all(isinstance(v, str) and 0 < len(v) <= _ID_MAX for v in (tid, owner)):
        return None
    if not isinstance(session, str) or len(session) > _ID_MAX or state not in _RUNNING:
        return None
    if type(rev) is not int:
        return None
    note = Message(message_id=str(uuid.uuid4()), task_id=tid, role="ROLE_AGENT", parts=[Part.of_text(REASON)])
    status = TaskStatus(state="TASK_STATE_FAILED", message=note, timestamp=now_iso())  # type: ignore[arg-type]
    task = Task(id=tid, context_id=str(uuid.uuid4()), status=status, history=[note])
    signed = (tid, owner, session, "TASK_STATE_FAILED", status.timestamp,
              task.model_dump_json(by_alias=True, exclude_none=True), None, replica, "", rev + 1)
    return Statement(_END, (signed[4], signed[5], replica, rev + 1, task_rows.mac(key, signed), tid, owner,
                            session, rev))
