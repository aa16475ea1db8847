"""The signature of an A2A task's row in a store several replicas share (``a2a_task``), and the check every
read makes (``task_journal.py``).

Another replica acts on such a row: it shows the task to its owner (``GetTask``, ``ListTasks``, the console's
question), takes a task waiting for input over and runs its pending call, ends a lapsed one. Unsigned, anyone
who could write the database (a replica's credentials, a DBA) could give a task to another owner, swap the
call a take-over then runs, or edit the question a person answers. So each row carries a MAC (a key derived
from ``sentinel.cluster.seal_key``) over every column a reader acts on: the task's id, owner and conversation,
its state, time, the task itself (status, history, artifacts: the question's text), its pending call, and the
lease bookkeeping a take-over is conditional on (replica, holder, revision). Not signed: ``lease_until``
(renewed on the database's clock without a rewrite; a forged one only ends a task early, FAILED) and
``cancel_asked`` (a request to stop: it never runs anything). A row that fails the check is refused: never
shown, taken over, continued or ended; it is counted and logged. Whoever rewrites a row legitimately (the
holder, a take-over, the sweeper ending a lapsed task) signs what it writes, from a row it verified.

What a MAC cannot stop: such a writer can delete rows, and put back an older version of a row it kept. A
replica refuses a version older than one it has seen of that task (``Revisions``: a round already taken over
and run is not taken again there); a replica that never saw the newer one cannot tell.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Sequence

from sentinel_mcp.storage.row_signature import sign_row, signed_row

PURPOSE = "a2a task"
# the signed columns, in the order they are signed; then ``mac``
SIGNED = "id, owner, session_id, state, updated, task, pending, replica, lease_holder, rev"
COLUMNS = SIGNED + ", mac"
WIDTH = len(SIGNED.split(", "))


def mac(key: bytes, row: Sequence[Any]) -> str:
    """The MAC of a row's signed columns (``SIGNED``: text, NULL, the revision as a number)."""
    return sign_row(key, PURPOSE, row)


def verified(key: bytes, row: Sequence[Any]) -> bool:
    """Whether a row read as ``COLUMNS`` carries the MAC of its signed columns."""
    return len(row) == WIDTH + 1 and signed_row(key, row[WIDTH], PURPOSE, row[:WIDTH])


class Revisions:
    """The newest revision seen of each task (bounded, the oldest entries go first): a row older than that is
    one put back, not the task as it is."""

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._seen: OrderedDict[str, int] = OrderedDict()

    def fresh(self, task_id: str, rev: int) -> bool:
        """Whether ``rev`` is not older than the newest seen of ``task_id`` (then it is the newest seen)."""
        seen = self._seen.get(task_id)
        if seen is not None and rev < seen:
            return False
        self.saw(task_id, rev)
        return True

    def saw(self, task_id: str, rev: int) -> None:
        if self._seen.get(task_id, -1) < rev:
            self._seen[task_id] = rev
        self._seen.move_to_end(task_id)
        while len(self._seen) > self.limit:
            self._seen.popitem(last=False)


class Refused:
    """The ids of rows refused here (bounded): a sweep does not read them again and again (one made-up row
    after another cannot crowd the lapsed tasks out of its bounded batch), and each is logged once."""

    def __init__(self, limit: int = 1000) -> None:
        self.limit = limit
        self.ids: OrderedDict[str, None] = OrderedDict()
        self.count = 0

    def add(self, task_id: Any) -> bool:
        """Count one refusal; True the first time this id is refused here (log it then)."""
        self.count += 1
        key = str(task_id)
        if key in self.ids:
            return False
        self.ids[key] = None
        while len(self.ids) > self.limit:
            self.ids.popitem(last=False)
        return True
