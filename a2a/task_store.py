"""In-memory A2A task store with a size cap; tasks are visible only to the identity that created them."""

from __future__ import annotations

import asyncio
import base64
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from a2a.jsonrpc import INVALID_PARAMS, UNSUPPORTED_OPERATION, RpcError, task_not_found
from a2a.protocol import TERMINAL_STATES, Task


@dataclass
class PendingCall:
    """A guarded call waiting for answers (the task is INPUT_REQUIRED)."""

    tool: str
    arguments: dict[str, Any]
    question_keys: list[str]
    kind: str  # the design message that started it ("sensor_request", "tool_call", ...)


@dataclass
class TaskRecord:
    task: Task
    owner: str
    session_id: str
    pending: PendingCall | None = None
    runner: asyncio.Task[None] | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def terminal(self) -> bool:
        return self.task.status.state in TERMINAL_STATES


class TaskStore:
    def __init__(self, max_tasks: int = 1000) -> None:
        self.max_tasks = max_tasks
        self._tasks: OrderedDict[str, TaskRecord] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tasks)

    def add(self, record: TaskRecord) -> None:
        if len(self._tasks) >= self.max_tasks:
            # evict the oldest finished task; live tasks are never dropped silently
            victim = next((tid for tid, r in self._tasks.items() if r.terminal), None)
            if victim is None:
                raise RpcError(UNSUPPORTED_OPERATION,
                               f"task store is full ({self.max_tasks} unfinished tasks); retry later")
            del self._tasks[victim]
        self._tasks[record.task.id] = record

    def get(self, task_id: str, owner: str) -> TaskRecord:
        record = self._tasks.get(task_id)
        if record is None or record.owner != owner:  # another caller's task does not exist for you
            raise task_not_found(task_id)
        return record

    def list(self, owner: str, *, context_id: str | None, state: str | None,
             after: str | None) -> list[TaskRecord]:
        """Newest status first, as ListTasks wants."""
        out = [r for r in self._tasks.values() if r.owner == owner
               and (context_id is None or r.task.context_id == context_id)
               and (state is None or r.task.status.state == state)
               and (after is None or (r.task.status.timestamp or "") >= after)]
        out.sort(key=lambda r: r.task.status.timestamp or "", reverse=True)
        return out

    def all_records(self) -> list[TaskRecord]:
        return list(self._tasks.values())


def encode_page_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode()


def decode_page_token(token: str | None) -> int:
    if not token:
        return 0
    try:
        text = base64.urlsafe_b64decode(token.encode()).decode()
        if not text.startswith("o:"):
            raise ValueError
        offset = int(text[2:])
        if offset < 0:
            raise ValueError
        return offset
    except (ValueError, UnicodeDecodeError):
        raise RpcError(INVALID_PARAMS, "Invalid params: pageToken is not a token this server issued") from None
