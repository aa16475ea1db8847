"""Where the service asks whether a message was heard before: this process's table (one gateway,
``message_replays.py``) or, for replicas on one store, the shared one (``shared_message_ids.py``). Either way
a message that cannot be told apart from a replay acts on nothing."""

from __future__ import annotations

from sentinel_mcp.a2a.jsonrpc import INVALID_PARAMS, RpcError
from sentinel_mcp.a2a.message_replays import SeenMessages
from sentinel_mcp.a2a.shared_message_ids import SharedMessageIds
from sentinel_mcp.a2a.task_store import store_fault
from sentinel_mcp.storage import Statement, StorageError


class HeardMessages:
    def __init__(self) -> None:
        self.local = SeenMessages()
        self.shared: SharedMessageIds | None = None  # set when tasks live in a store replicas share

    async def claim(self, caller: str, message_id: str, task_id: str) -> str | None:
        """None: a new message, heard now as starting (or continuing) ``task_id``; else the task its first
        hearing started (``SeenMessages.PENDING`` never: one still being handled is refused here)."""
        if self.shared is not None:
            try:
                return await self.shared.claim(caller, message_id, task_id)
            except StorageError as e:  # fail closed: a replay must not act twice
                # (whether this message was received before is not known)
                raise store_fault("the task store cannot be read, nothing was started", e) from None
        known = self.local.claim(caller, message_id)
        if known == SeenMessages.PENDING:
            raise RpcError(INVALID_PARAMS, f"Invalid params: message {message_id} is being handled already; "
                           "follow the task its first sending returns")
        return known

    async def take_over(self, caller: str, message_id: str, task_id: str, new_task_id: str) -> bool:
        """Whether the first hearing (its task ``task_id`` not to be found) stored nothing and this one now
        starts ``new_task_id`` instead (the shared store only: this process's table releases what it did not
        store, and a restart forgets it)."""
        if self.shared is None:
            return False
        try:
            return await self.shared.take_over(caller, message_id, task_id, new_task_id)
        except StorageError as e:
            raise store_fault("the task store cannot be read, nothing was started", e) from None

    async def renew(self) -> None:
        """The shared store's hearings this process is still starting are renewed
        (``SharedMessageIds.renew``): this process's own table needs none."""
        if self.shared is not None:
            await self.shared.renew()

    def stored(self, caller: str, message_id: str, task_id: str) -> list[Statement]:
        """What marks its task stored, in the transaction storing it (none: kept in this process)."""
        return [] if self.shared is None else self.shared.stored(caller, message_id, task_id)

    def settle(self, caller: str, message_id: str, task_id: str) -> None:
        if self.shared is not None:
            self.shared.settle(caller, message_id, task_id)
        else:
            self.local.settle(caller, message_id, task_id)

    async def release(self, caller: str, message_id: str, task_id: str) -> None:
        if self.shared is not None:
            await self.shared.release(caller, message_id, task_id)
        else:
            self.local.release(caller, message_id)

    def remember(self, caller: str, message_id: str, task_id: str) -> None:
        """A task's message read back from the journal at a restart (one gateway: the shared store keeps its
        own)."""
        if self.shared is None:
            self.local.remember(caller, message_id, task_id)
