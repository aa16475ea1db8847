"""A2A tasks running on another replica: cancelled and streamed through the store replicas share.

A running task cannot be taken over (its one guarded call may already be on its way), so the replica running
it stays the only one that can stop it or say what it does. Any other replica:

- **cancels** it by asking in the task's row (``cancel_asked``, one conditional ``UPDATE``). The replica
  running it looks for asked cancels every ``task_lease.CANCEL_POLL`` seconds while it runs tasks (one indexed
  read, none while it runs nothing) and cancels the runner exactly as a local cancel does: a call not yet
  forwarded is never forwarded; one already forwarded is not undone (as on one replica). The asking replica
  reads the row until the task ends (at most ``task_lease.CANCEL_WAIT`` seconds) and answers with it:
  ``CANCELED``, or "not cancelable" when the call finished first. If the holder does not answer in time (it
  died: its lease ends the task FAILED; or it is slow), the answer is the task as stored, still running, and
  the cancel stays asked while the task runs. A request left over never cancels a later round: every write
  that leaves the running states clears it.
- **streams** it (``SubscribeToTask``) by following its row: the snapshot, then a status update whenever the
  stored status changes and an artifact update for each new artifact, read every ``task_lease.CANCEL_POLL``
  seconds (one indexed read per followed task, shared by its subscribers), until the task ends or waits for
  input (where A2A ends a stream), or ``FOLLOW_SECONDS`` pass. The passing ``WORKING`` states the holder only
  queues may be seen late or merged; every state a peer may act on is committed before it is visible, so it is
  seen.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from sentinel_mcp.a2a import task_lease
from sentinel_mcp.a2a.jsonrpc import INTERNAL_ERROR, TASK_NOT_CANCELABLE, RpcError
from sentinel_mcp.a2a.protocol import INTERRUPTED_STATES, Task
from sentinel_mcp.a2a.task_events import EventStream, StreamEvent, TaskEvents, ends_stream
from sentinel_mcp.a2a.task_host import TaskHost
from sentinel_mcp.a2a.task_journal import TaskJournal
from sentinel_mcp.a2a.task_store import TaskRecord, store_fault
from sentinel_mcp.storage import StorageError

log = logging.getLogger("sentinel_mcp.a2a.service")
RUNNING_STATES = ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
FOLLOW_SECONDS = 3600.0  # a stream of another replica's task ends after this long (the peer subscribes again)
MAX_FOLLOWED = 200  # tasks of other replicas followed at once by this replica (each one read per poll)


class RemoteTasks(TaskHost):
    _journal: TaskJournal | None
    events: TaskEvents
    _followers: dict[str, asyncio.Task[None]]

    # --- the replica running the task ---------------------------------------------------------

    async def _watch_cancels(self, every: float) -> None:
        """Cancel the tasks running here that another replica was asked to cancel."""
        journal = self._journal
        assert journal is not None
        while True:
            await asyncio.sleep(every)
            mine = [r for r in self.store.all_records() if r.task.status.state in RUNNING_STATES]
            if not mine:
                continue
            try:
                asked = set(await journal.asked_cancels([r.task.id for r in mine]))
            except Exception as e:  # noqa: BLE001 - the database is away: the leases say what happens
                log.warning("A2A: could not look for cancels asked through other replicas: %s", e)
                continue
            for record in mine:
                if record.task.id in asked and not record.terminal:
                    log.info("A2A task %s: cancel asked through another replica", record.task.id)
                    await self._cancel_here(record)

    async def _cancel_here(self, record: TaskRecord) -> None:
        """Stop the task's runner (a call not yet forwarded never is) and record it CANCELED."""
        runner = record.runner
        if runner is not None and not runner.done():
            runner.cancel()
            await asyncio.wait({runner})
        if not record.terminal:
            record.pending = None
            await self._settle(record, "TASK_STATE_CANCELED", "canceled by the client")

    # --- any other replica --------------------------------------------------------------------

    async def _cancel_elsewhere(self, found: TaskRecord, owner: str) -> Task | None:
        """Ask the replica running ``found`` to cancel it and wait (bounded) to see it end. Returns the task
        as stored then; None when it is no longer running and the caller should look again (it waits for
        input now, and can be taken over and cancelled here)."""
        journal = self._journal
        assert journal is not None
        task_id = found.task.id
        try:
            replica = await journal.ask_cancel(task_id, owner)
        except StorageError as e:
            raise store_fault("the task store cannot be written, nothing was cancelled", e) from None
        now = found
        try:
            if replica is not None:
                for _ in range(max(1, int(task_lease.CANCEL_WAIT / task_lease.CANCEL_POLL))):
                    await asyncio.sleep(task_lease.CANCEL_POLL)
                    read = await journal.read(task_id, owner)
                    if read is None:
                        break
                    now = read
                    if now.task.status.state not in RUNNING_STATES:
                        break
                else:  # the replica running it has not acted yet: the cancel stays asked while it runs
                    return now.task
            else:
                now = await journal.read(task_id, owner) or found
        except StorageError as e:
            raise store_fault("the cancel was asked, but the task store cannot be read", e) from None
        state = now.task.status.state
        if state == "TASK_STATE_CANCELED":
            return now.task
        if state in INTERRUPTED_STATES:
            return None
        raise RpcError(
            TASK_NOT_CANCELABLE,
            f"Task {task_id} cannot be canceled: it is {state} (it ended on replica {found.replica or '?'} "
            "before the cancel reached it)",
            {"taskId": task_id},
        )

    def _follow(self, found: TaskRecord, owner: str, view: Callable[[Task], dict[str, Any]]) -> EventStream:
        """A stream of a task another replica runs, read from the shared store (see the module note);
        ``view``: the task as a peer is shown it."""
        task_id = found.task.id
        if task_id not in self._followers and len(self._followers) >= MAX_FOLLOWED:
            raise RpcError(
                INTERNAL_ERROR,
                f"this replica follows {MAX_FOLLOWED} tasks of other replicas already; read it with GetTask",
            )
        latest = {"task": found.task}
        stream = EventStream(self.events.subscribe(task_id), lambda: {"task": view(latest["task"])})
        if task_id not in self._followers:
            self._followers[task_id] = asyncio.create_task(
                self._poll_elsewhere(found, owner, latest), name=f"a2a-follow-{task_id}"
            )
        return stream

    async def _poll_elsewhere(self, found: TaskRecord, owner: str, latest: dict[str, Task]) -> None:
        journal = self._journal
        assert journal is not None
        task_id, seen = found.task.id, found.task
        try:
            for _ in range(int(FOLLOW_SECONDS / task_lease.CANCEL_POLL)):
                await asyncio.sleep(task_lease.CANCEL_POLL)
                if not self.events.subscribers(task_id):
                    return
                try:
                    read = await journal.read(task_id, owner)
                except StorageError as e:
                    log.warning("A2A: following task %s: the store cannot be read: %s", task_id, e)
                    continue
                if read is None:
                    return
                task = read.task
                latest["task"] = task
                for event in _changes(seen, task):
                    self.events.publish(task_id, event)
                seen = task
                if task.status.state not in RUNNING_STATES:
                    return
        finally:
            self._followers.pop(task_id, None)
            if not ends_stream({"task": {"status": {"state": seen.status.state}}}):
                self.events.end_task(task_id)  # followed no longer (time, store gone): end its streams


def _changes(before: Task, after: Task) -> list[StreamEvent]:
    """The stream events between two stored versions of a task: new artifacts, then a changed status."""
    events: list[StreamEvent] = []
    old = len(before.artifacts or [])
    for artifact in (after.artifacts or [])[old:]:
        events.append(
            {
                "artifactUpdate": {
                    "taskId": after.id,
                    "contextId": after.context_id,
                    "artifact": artifact.to_wire(),
                    "append": False,
                    "lastChunk": True,
                }
            }
        )
    if after.status != before.status:
        status = after.status.to_wire()
        events.append({"statusUpdate": {"taskId": after.id, "contextId": after.context_id, "status": status}})
    return events
