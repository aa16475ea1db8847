"""In-memory A2A task store with a size cap; tasks are visible only to the identity that created them."""

from __future__ import annotations

import asyncio
import base64
import builtins
import json
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Callable, Protocol, Sequence

from pydantic import BaseModel

from sentinel_mcp.a2a.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    UNSUPPORTED_OPERATION,
    RpcError,
    task_not_found,
)
from sentinel_mcp.a2a.protocol import TERMINAL_STATES, Task
from sentinel_mcp.storage import Statement, StorageError
from sentinel_mcp.storage.database import WriteResult

log = logging.getLogger(__name__)


@dataclass
class PendingCall:
    """A guarded call waiting for answers (the task is INPUT_REQUIRED)."""

    tool: str
    arguments: dict[str, Any]
    question_keys: list[str]
    kind: str  # the design message that started it ("sensor_request", "tool_call", ...)
    # the tool (``<server>__<tool>``) the questions are about: the answers count for it only, the resumed
    # call reaches it or nothing (a row kept without one resumes nowhere: the task asks afresh)
    identity: str = ""
    # the stamp of the credentials of the request that started (or last continued) the task: a process
    # that resumes it without that request proves them again (``resumed_credentials.py``); None: none kept
    credential: dict[str, Any] | None = None


@dataclass
class TaskRecord:
    task: Task
    owner: str
    session_id: str
    pending: PendingCall | None = None
    runner: asyncio.Task[None] | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    replica: str = ""  # read from a shared store: the replica that holds it ("" when held here)
    holder: str = ""  # read from a shared store: that replica process's lease token (what a take-over checks)
    rev: int = 0  # read from a shared store: the row's revision (a take-over takes only the round it read)
    # read from a shared store: its signed columns and MAC as read (a take-over signs the row it rewrites)
    stored: tuple[Any, ...] | None = None
    # the status's stamp and the process clock's reading when this process set or first saw it: how long a
    # task has waited for input is measured by that clock (``input_expiry``), never by the wall-clock stamp
    status_clock: tuple[str | None, float] | None = None
    # the credentials of the request that created or last continued it, asked again before each guarded call
    # it makes later (``gateway/caller_recheck.py``: a rotated token, a revoked certificate ends it); None:
    # they hold for the process's life, or this process never saw that request (not kept in the store)
    recheck: Callable[[], Any] | None = field(default=None, repr=False, compare=False)

    @property
    def terminal(self) -> bool:
        return self.task.status.state in TERMINAL_STATES


class HeldElsewhere(RpcError):
    """A task another replica is running (it cannot be taken over): cancelled through the shared store
    (``ask_cancel``), followed by reading the store (``A2AService``), never run here."""

    def __init__(self, record: "TaskRecord") -> None:
        task_id = record.task.id
        super().__init__(
            UNSUPPORTED_OPERATION,
            f"Task {task_id} is held by replica {record.replica or '?'}: it is {record.task.status.state}; "
            "it takes no input now (wait for it, or cancel it)",
            {"taskId": task_id},
        )
        self.record = record


WAITING_STATES = ("TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED")  # a pending call waits for answers


class Journal(Protocol):
    def save(self, record: TaskRecord) -> None: ...
    async def commit(self, record: TaskRecord, task: Task | None = None,
                     also: Sequence[Statement] = ()) -> list[WriteResult]: ...
    def delete(self, task_id: str) -> None: ...
    shared: bool
    holder: str  # this process's lease token (shared store): what its rows carry while it holds them
    async def read(self, task_id: str, owner: str) -> TaskRecord | None: ...
    async def owned(self, owner: str, limit: int) -> list[TaskRecord]: ...
    async def claim(self, record: TaskRecord) -> bool: ...


def json_bytes(model: BaseModel) -> int:
    """A model's size as the memory and the journal hold it: its JSON's UTF-8 bytes (``exclude_none``), not
    its characters (an astral character is one character and four bytes: a share counted in characters held
    four times its bytes)."""
    return len(model.__pydantic_serializer__.to_json(model, exclude_none=True))


class TaskStore:
    def __init__(
        self,
        max_tasks: int = 1000,
        journal: Journal | None = None,
        per_caller: int | None = None,
        bytes_per_caller: int | None = None,
    ) -> None:
        self.max_tasks = max_tasks
        self.per_caller = per_caller or max_tasks  # unfinished tasks one owner may hold here
        self.bytes_per_caller = bytes_per_caller  # what one owner's tasks may hold here (None: no bound)
        self.journal = journal
        self._tasks: OrderedDict[str, TaskRecord] = OrderedDict()
        self._sizes: dict[str, int] = {}  # task id -> its size as JSON when added, in bytes (see ``_size``)

    def load(self, records: list[TaskRecord]) -> None:
        """Put back tasks from a journal (oldest first), keeping the newest ``max_tasks``."""
        for record in records[-self.max_tasks:]:
            self._tasks[record.task.id] = record

    def saved(self, record: TaskRecord) -> None:
        """The task changed: persist it when a journal is attached."""
        if self.journal is not None and record.task.id in self._tasks:
            self.journal.save(record)

    def holds(self, record: TaskRecord) -> bool:
        return self._tasks.get(record.task.id) is record

    def __len__(self) -> int:
        return len(self._tasks)

    def add(self, record: TaskRecord, save: bool = True) -> None:
        """Hold a new task (``save``: queue its first write; False when the caller committed it already).

        An owner holding ``per_caller`` unfinished tasks is refused (only that owner: one peer cannot fill the
        store and lock the others out)."""
        mine = sum(1 for r in self._tasks.values() if r.owner == record.owner and not r.terminal)
        if mine >= self.per_caller and self.per_caller < self.max_tasks:  # (a whole store's share: "full")
            raise RpcError(
                UNSUPPORTED_OPERATION,
                f"you have {mine} unfinished tasks, your share of this agent's task store: "
                "wait for some to finish, answer or cancel them, then retry",
            )
        size = self._size(record)
        self._make_room(record.owner, size)
        if len(self._tasks) >= self.max_tasks:
            # evict a finished task of whoever holds the most tasks (its oldest): one caller's flood of tasks
            # pushes out its own results, never another's; live tasks are never dropped silently
            counts: dict[str, int] = {}
            for r in self._tasks.values():
                counts[r.owner] = counts.get(r.owner, 0) + 1
            victim = None
            for owner in sorted(counts, key=lambda o: -counts[o]):
                victim = self._oldest_finished(owner)
                if victim is not None:
                    break
            if victim is None:
                raise RpcError(UNSUPPORTED_OPERATION,
                               f"task store is full ({self.max_tasks} unfinished tasks); retry later")
            self._evict(victim)
        self._tasks[record.task.id] = record
        self._sizes[record.task.id] = size
        if save:
            self.saved(record)

    @property
    def shared(self) -> bool:
        """Tasks live in a store several replicas share (read through; this one holds only its own)."""
        return self.journal is not None and self.journal.shared

    def drop(self, task_id: str) -> TaskRecord | None:
        """Forget a task held here (another replica ended it); the store keeps what that replica wrote."""
        self._sizes.pop(task_id, None)
        return self._tasks.pop(task_id, None)

    def grow(self, record: TaskRecord, extra: int) -> None:
        """``record`` (held here) is about to keep ``extra`` more bytes (a continuation message): within its
        owner's share, or RpcError and nothing changes. Sentinel's own status messages count too: the task is
        measured again (its size was taken when it was added, and each question round's status went into its
        history since), and room is kept for the status the round now started will leave there, the size of
        the one it replaces (a round's question, whose keys are whole digests, passed the share by one)."""
        measured = self._sizes.get(record.task.id)
        status = record.task.status.message
        extra += json_bytes(status) if status is not None else 0
        self._sizes[record.task.id] = json_bytes(record.task)
        try:
            self._make_room(record.owner, extra)
        except RpcError:
            if measured is not None:
                self._sizes[record.task.id] = measured
            raise
        self._sizes[record.task.id] += extra

    def _make_room(self, owner: str, size: int) -> None:
        """An owner past its share of bytes makes room from its own finished tasks, oldest first: one caller's
        large messages cannot fill the gateway's memory (and journal). RpcError when it cannot."""
        if self.bytes_per_caller is None:
            return
        held = sum(self._size(r) for r in self._tasks.values() if r.owner == owner)
        while held + size > self.bytes_per_caller:
            victim = self._oldest_finished(owner)
            if victim is None:
                raise RpcError(
                    UNSUPPORTED_OPERATION,
                    f"your tasks hold {held} bytes, your share of this agent's task store "
                    f"({self.bytes_per_caller}): wait for some to finish, or cancel them, then retry",
                )
            held -= self._size(self._tasks[victim])
            self._evict(victim)

    def _oldest_finished(self, owner: str) -> str | None:
        return next((tid for tid, r in self._tasks.items() if r.owner == owner and r.terminal), None)

    def _evict(self, task_id: str) -> None:
        del self._tasks[task_id]
        self._sizes.pop(task_id, None)
        # a shared store keeps it for every replica
        if self.journal is not None and not self.journal.shared:
            self.journal.delete(task_id)

    def _size(self, record: TaskRecord) -> int:
        """The task's size as JSON (``json_bytes``), measured once (when added, or first looked at after a
        load): its messages are what a caller sends, up to a frame each."""
        size = self._sizes.get(record.task.id)
        if size is None:
            size = json_bytes(record.task)
            self._sizes[record.task.id] = size
        return size

    def get(self, task_id: str, owner: str) -> TaskRecord:
        """A task held here (to act on: continue, cancel, subscribe)."""
        record = self._tasks.get(task_id)
        if record is None or record.owner != owner:  # another caller's task does not exist for you
            raise task_not_found(task_id)
        return record

    async def held(self, task_id: str, owner: str) -> TaskRecord:
        """``get``; in a shared store, a task of this owner that another replica holds while it waits for
        input
        is taken over (``claim``: nothing runs for it there); one running there is named as such."""
        here = self._tasks.get(task_id)
        if here is not None and here.owner == owner:
            found = await self.current(here)  # waiting here, but maybe taken over since (then dropped here)
            if found is here:
                return here
        else:
            found = await self.find(task_id, owner)
        if found.terminal:
            return found
        if (
            self.journal is not None
            and found.pending is not None
            and found.task.status.state in WAITING_STATES
        ):
            try:
                claimed = await self.journal.claim(found)
            except StorageError as e:
                raise _unreadable(e) from None
            if claimed:
                found.replica, found.holder = "", ""
                self._tasks[task_id] = found
                return found
            found = await self.find(task_id, owner)  # another replica continued it meanwhile
        raise HeldElsewhere(found)

    async def current(self, record: TaskRecord) -> TaskRecord:
        """A task held here, as it is now. In a shared store one that waits for input here may have been
        taken over since by another replica (an answer given there; nothing runs for it here meanwhile): its
        row is then the task, and it is dropped here (read as held here, it stayed waiting for ever)."""
        if (self.journal is None or not self.journal.shared or record.pending is None
                or record.task.status.state not in WAITING_STATES):
            return record
        try:
            row = await self.journal.read(record.task.id, record.owner)
        except StorageError as e:
            raise _unreadable(e) from None
        if row is None or row.holder == self.journal.holder:
            return record
        self.drop(record.task.id)
        return row

    def moved_on(self, here: TaskRecord, row: TaskRecord) -> bool:
        """Whether ``row`` (read now) shows a task held here as waiting taken over by another replica."""
        return (self.journal is not None and here.pending is not None
                and here.task.status.state in WAITING_STATES and row.holder != self.journal.holder)

    async def find(self, task_id: str, owner: str) -> TaskRecord:
        """A task to read: held here, or (shared store) any replica's, if it is ``owner``'s."""
        record = self._tasks.get(task_id)
        if record is not None and record.owner == owner:
            return await self.current(record)
        if self.journal is not None and self.journal.shared:
            try:
                found = await self.journal.read(task_id, owner)
            except StorageError as e:
                raise _unreadable(e) from None
            if found is not None:
                return found
        raise task_not_found(task_id)

    async def listed(
        self, owner: str, *, context_id: str | None, state: str | None, since: str | None
    ) -> list[TaskRecord]:
        """``list``; in a shared store, every replica's tasks of ``owner`` (the newest ``max_tasks``), those
        held here as this replica has them now."""
        if self.journal is None or not self.journal.shared:
            return self.list(owner, context_id=context_id, state=state, since=since)
        try:
            merged = {r.task.id: r for r in await self.journal.owned(owner, self.max_tasks)}
        except StorageError as e:
            raise _unreadable(e) from None
        merged |= {tid: r for tid, r in self._tasks.items()
                   if r.owner == owner and not (tid in merged and self.moved_on(r, merged[tid]))}
        return self.list(owner, context_id=context_id, state=state, since=since, among=list(merged.values()))

    def list(
        self,
        owner: str,
        *,
        context_id: str | None,
        state: str | None,
        since: str | None,
        among: list[TaskRecord] | None = None,
    ) -> list[TaskRecord]:
        """Newest status first, as ListTasks wants; ``since`` is an ISO 8601 time (status at or after it)."""
        floor = instant(since) if since else None
        out = [
            r
            for r in (self._tasks.values() if among is None else among)
            if r.owner == owner
            and (context_id is None or r.task.context_id == context_id)
            and (state is None or r.task.status.state == state)
            and (floor is None or instant(r.task.status.timestamp) >= floor)
        ]
        out.sort(key=sort_key, reverse=True)
        return out

    def all_records(self) -> builtins.list[TaskRecord]:  # (``list`` is the method above)
        return list(self._tasks.values())


def _unreadable(e: StorageError) -> RpcError:
    return store_fault("the task store cannot be read now", e)


def store_fault(said: str, e: StorageError) -> RpcError:
    """What a caller hears when the task store fails: ``said``, and no more. The store's own words name its
    server, user, database or file path: for the log, never for a peer."""
    log.warning("A2A: %s: %s", said, e)
    return RpcError(INTERNAL_ERROR, f"{said} (the details are in this agent's log)")


def instant(iso: str | None) -> datetime:
    if not iso:
        return datetime.min.replace(tzinfo=UTC)
    t = datetime.fromisoformat(iso)
    return t if t.tzinfo else t.replace(tzinfo=UTC)


SortKey = tuple[str, str]  # (status timestamp, task id): newest first, ties broken by id


def sort_key(record: TaskRecord) -> SortKey:
    return (record.task.status.timestamp or "", record.task.id)


def encode_page_token(after: SortKey) -> str:
    """A cursor naming the last task of a page, so pages stay right when tasks are added meanwhile."""
    return base64.urlsafe_b64encode(json.dumps(["c1", *after]).encode()).decode()


# a token this server issues names one timestamp and one task id (under 200 characters); anything longer is
# not ours, and is refused before it is decoded (a long one could nest deep enough to exhaust the parser)
MAX_PAGE_TOKEN = 512


def decode_page_token(token: str | None) -> SortKey | None:
    if not token:
        return None
    try:
        if len(token) > MAX_PAGE_TOKEN:
            raise ValueError
        tag, ts, task_id = json.loads(base64.urlsafe_b64decode(token.encode()))
        if tag != "c1" or not isinstance(ts, str) or not isinstance(task_id, str):
            raise ValueError
        return ts, task_id
    except (ValueError, TypeError, UnicodeDecodeError):
        raise RpcError(
            INVALID_PARAMS, "Invalid params: pageToken is not a token this server issued"
        ) from None
