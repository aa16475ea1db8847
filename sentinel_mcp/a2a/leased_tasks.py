"""A2A tasks in a store several replicas share: keeping this replica's leases, and holding a task before it
runs.

Mixed into ``A2AService`` (uses its ``store`` and ``_journal``); the rules are in ``task_lease.py``.
"""

from __future__ import annotations

import asyncio
import logging
import time

from sentinel_mcp.a2a.heard_messages import HeardMessages
from sentinel_mcp.a2a.jsonrpc import UNSUPPORTED_OPERATION, RpcError
from sentinel_mcp.a2a.protocol import TaskStatus, now_iso
from sentinel_mcp.a2a.task_journal import LeaseLost, TaskJournal
from sentinel_mcp.a2a.task_host import TaskHost
from sentinel_mcp.a2a.task_store import TaskRecord, store_fault
from sentinel_mcp.storage import StorageError

log = logging.getLogger("sentinel_mcp.a2a.service")
RUNNING_STATES = ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")  # leased in a shared store (task_lease.py)


class LeasedTasks(TaskHost):
    _journal: TaskJournal | None
    seen: HeardMessages

    async def _keep_leases(self, every: float) -> None:
        """Renew the leases of the tasks running here (one statement), stop those another replica ended (this
        one could not renew in time), end other replicas' lapsed tasks, and renew the messages heard here
        whose task is not stored yet."""
        journal = self._journal
        assert journal is not None
        renewed_at = time.monotonic()
        while True:
            await asyncio.sleep(every)
            mine = [r for r in self.store.all_records() if r.task.status.state in RUNNING_STATES]
            try:
                kept = await journal.renew([r.task.id for r in mine])
                renewed_at = time.monotonic()
                lost = [r for r in mine if r.task.id not in kept]
                await journal.end_lapsed()
            except Exception as e:  # noqa: BLE001 - the database is away: keep trying, but not past the lease
                log.warning("A2A task leases not renewed: %s", e)
                lost = mine if time.monotonic() - renewed_at > journal.lease_seconds else []
            for record in lost:
                self._lost(record)
            try:  # messages heard here whose task is not stored yet: still handled, not to be taken over
                await self.seen.renew()
            except Exception as e:  # noqa: BLE001 - unrenewed, one may be taken over; this replica runs nothing then
                log.warning("A2A message ids being handled here not renewed: %s", e)

    def _lost(self, record: TaskRecord) -> None:
        """Another replica ended this task (its lease lapsed): stop it here; the store says why it ended."""
        if self.store.drop(record.task.id) is None:
            return
        log.warning("A2A task %s lost its lease (ended by another replica); stopping it here", record.task.id)
        if record.runner is not None and not record.runner.done():
            record.runner.cancel()

    async def _hold_to_run(self, record: TaskRecord) -> None:
        """Record WORKING before a round's call runs (the store refusing: nothing runs, the task waits as
        stored). Shared store: under this process's lease, so a task another replica took over meanwhile
        (``TaskStore.held``) is never run here too. One gateway's store too: queued only, a store failing
        through the round left the task stored as the round before (its call pending), and after a restart
        the same answers ran the call again; recorded running, an outcome not recorded reads as
        interrupted."""
        if self._journal is None:
            return
        working = record.task.model_copy(
            update={"status": TaskStatus(state="TASK_STATE_WORKING", timestamp=now_iso())}
        )
        try:
            await self._journal.commit(record, working)
        except LeaseLost:
            self.store.drop(record.task.id)
            raise RpcError(
                UNSUPPORTED_OPERATION,
                f"Task {record.task.id} was taken over by another replica "
                "meanwhile; nothing was run here (read it with GetTask)",
                {"taskId": record.task.id},
            ) from None
        except StorageError as e:
            raise store_fault("the task store cannot be written, nothing was run", e) from None
