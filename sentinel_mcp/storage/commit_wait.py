"""A commit's wait for the server's word, bounded: past it the commit is cancelled and its jobs fail closed.

With ``synchronous_commit=on`` and a synchronous standby, the server answers a commit once the standby has
it. A standby that is gone (or a name in ``synchronous_standby_names`` nobody answers to) makes every commit
wait for ever, and ``statement_timeout`` does not cover that wait (the server turns it off before it
commits). The replica's one writer thread waited there, every call behind it too (no answer, no refusal),
and its health said "ok" (``tests/cluster/test_commit_wait_bounded.py``).

So a commit (or a statement run alone, whose commit is its own) is given ``seconds``; past them the writer
asks the server to cancel it. The server then ends the wait with a warning ("canceling wait for synchronous
replication": the transaction is committed on the primary, not confirmed replicated), or the statement with
an error. Either way the jobs hear ``CommitUnconfirmed``, a fault: they fail closed (as after a crash at
commit: their rows may be there), the store shows degraded with the cause, and the next write tries again.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, Iterator

from sentinel_mcp.storage.database import StorageError

LOOK_EVERY = 5.0  # seconds between the watch's looks while no commit is due (so a commit is cut by then)
CANCEL_TIMEOUT = 3.0  # seconds the cancel request itself may take (a new connection to the server)
_SYNC_WAIT = "synchronous replication"  # what the server's warning says when a commit's wait is cancelled


class CommitUnconfirmed(StorageError):
    """The server did not confirm a commit within its bound (a synchronous standby that does not answer):
    cancelled; the rows may be committed on the primary. A fault: the jobs fail closed, the store degrades."""


class CommitWatch:
    """One writer's watch over its commits: a thread of its own, armed and disarmed by the writer around each
    commit under a lock; never woken for it (no thread started nor woken per commit, which would cost every
    audit write): it looks every ``LOOK_EVERY`` seconds at most, so a commit is cancelled that much past its
    bound at most."""

    def __init__(self, where: str) -> None:
        self.where = where  # the store as it is shown (no secret)
        self._cond = threading.Condition()
        self._armed: tuple[int, Any, float] | None = None  # (token, connection, deadline)
        self._fired = 0  # the token of the last commit cancelled
        self._warned = 0  # the token of the last commit whose wait the server said was cancelled
        self._heard_on: Any = None  # the connection whose notices this watch hears
        self._seq = 0
        self._period = 1.0
        self._closed = False
        self._thread: threading.Thread | None = None

    @contextlib.contextmanager
    def bounded(self, conn: Any, seconds: float) -> Iterator[None]:
        """Run a commit (the block) on ``conn``, cancelled past ``seconds``. Raises ``CommitUnconfirmed``
        when the wait was cancelled or the server said it was."""
        with self._cond:
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._run, name=f"commit-watch:{self.where[:40]}",
                                                daemon=True)
                self._thread.start()
            self._seq += 1
            token = self._seq
            self._armed = (token, conn, time.monotonic() + seconds)
            self._period = min(seconds, LOOK_EVERY)  # not woken for it: it looks at least this often
        if self._heard_on is not conn:  # once per connection (a handler added per commit cost ~10 us)
            conn.add_notice_handler(self._heard)
            self._heard_on = conn
        try:
            yield
        except Exception as e:
            if self._disarm(token):
                raise CommitUnconfirmed(_said(self.where, seconds)) from e
            raise
        finally:
            fired = self._disarm(token)
        if fired or self._warned == token:
            raise CommitUnconfirmed(_said(self.where, seconds))

    def _heard(self, diag: Any) -> None:
        """A notice on the writer's connection (its own thread, during a statement): the server's word that
        a commit's wait for the standby was cancelled marks the commit armed now."""
        if _SYNC_WAIT in str(getattr(diag, "message_primary", "") or ""):
            self._warned = self._seq

    def _disarm(self, token: int) -> bool:
        with self._cond:
            if self._armed is not None and self._armed[0] == token:
                self._armed = None
            return self._fired == token

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                if self._armed is None:
                    self._cond.wait(self._period)
                    continue
                token, conn, deadline = self._armed
                left = deadline - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                self._armed, self._fired = None, token
                try:  # under the lock: the block's end waits for it, so no cancel reaches a later statement
                    conn.cancel_safe(timeout=CANCEL_TIMEOUT)
                except Exception:  # noqa: BLE001 - the server unreachable: the wait ends with the connection
                    pass


def _said(where: str, seconds: float) -> str:
    return (f"{where}: the server did not confirm a commit within {seconds:g} s (a synchronous standby that "
            "does not answer?); cancelled, the call refused")
