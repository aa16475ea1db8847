"""Whose thread at another agent a message continues.

Behind the gateway, Sentinel reaches a peer under one identity for all its principals (its token, its card),
so the peer cannot tell them apart; the ids a message carries would join any principal to any other's
thread there. So, for each principal:

- a context id goes out as ``<principal>:<id>`` (a principal name has no ':'). An id already in the caller's
  own form goes as it is, so an id a peer echoed back continues; any other (another principal's form
  included) is put into the caller's form, a context of its own. With neither a context nor a task named,
  one of the caller's is made up, so the peer never makes up one that is nobody's.
- a task id continues only for the principal it was answered to (remembered here, the most recent
  ``TASKS_PER_PRINCIPAL`` per principal and peer). Any other, made up, another principal's or from before a
  restart, is refused alike, before anything is sent.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from typing import Any

TASKS_PER_PRINCIPAL = 1_000
MAX_ID = 1_000  # characters of an id Sentinel keeps


class UnknownTask(ValueError):
    pass


class PeerThreads:
    def __init__(self) -> None:
        self._tasks: dict[str, OrderedDict[tuple[str, str], None]] = {}

    @staticmethod
    def context(principal: str, given: str | None, task_id: str | None) -> str | None:
        """The context id sent for ``principal``'s message (None: the peer takes it from the task)."""
        if not given:  # (an empty id names no context either)
            return None if task_id is not None else f"{principal}:{uuid.uuid4()}"
        mine = f"{principal}:"
        return given if given.startswith(mine) else mine + given

    def check_task(self, principal: str, peer: str, task_id: str | None) -> None:
        """Raise ``UnknownTask`` unless ``task_id`` (if any) was answered to ``principal`` by ``peer``."""
        if task_id is None:
            return
        held = self._tasks.get(principal)
        if held is None or (peer, task_id) not in held:
            raise UnknownTask(
                f"no task {task_id[:100]!r} of yours at this peer (a task continues only in the "
                "conversation thread its answer came to); nothing was sent"
            )
        held.move_to_end((peer, task_id))

    def answered(self, principal: str, peer: str, answer: Any) -> None:
        """Remember the task a peer's answer names as ``principal``'s."""
        found = answer.get("task") if isinstance(answer, dict) else None
        task_id = found.get("id") if isinstance(found, dict) else None
        if task_id is None and isinstance(answer, dict) and isinstance(answer.get("message"), dict):
            task_id = answer["message"].get("taskId")
        if not isinstance(task_id, str) or not task_id or len(task_id) > MAX_ID:
            return
        held = self._tasks.setdefault(principal, OrderedDict())
        held[(peer, task_id)] = None
        held.move_to_end((peer, task_id))
        while len(held) > TASKS_PER_PRINCIPAL:
            held.popitem(last=False)
