"""Whose thread at another agent a message continues.

Behind the gateway, Sentinel reaches a peer under one identity for all its principals (its token, its card),
so the peer cannot tell them apart; the ids a message carries would join any principal to any other's
thread there. So, for each principal:

- a context id goes out as ``<principal>:<id>`` (a principal name has no ':'). An id already in the caller's
  own form goes as it is, so an id a peer echoed back continues; any other (another principal's form
  included) is put into the caller's form, a context of its own. With neither a context nor a task named,
  one of the caller's is made up, so the peer never makes up one that is nobody's.
- a task id continues only a task in one of the caller's contexts: the peer is asked for the task
  (``GetTask``) before anything is sent, and a task it does not know, or knows in another's context, is
  refused alike. Asked where the task lives, not remembered here: it holds across restarts and replicas.
- an intent id offered to the orchestrator (``a2a_offer``) goes in the caller's form as a context id does,
  in a context of the caller's: an orchestrator that keeps offers by their id never joins two principals'.
"""

from __future__ import annotations

import uuid
from typing import Any

from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.core.errors import A2AError


class UnknownTask(A2AError):
    def __init__(self, task_id: str) -> None:
        super().__init__(
            compose("no task '", safe_text(task_id, 100), "' of yours at this peer (a task continues only in "
                    "the caller's own conversation with it; the peer was asked); nothing was sent")
        )


def context(principal: str, given: str | None, task_id: str | None) -> str | None:
    """The context id sent for ``principal``'s message (None: the peer takes it from the task)."""
    if not given:  # (an empty id names no context either)
        return None if task_id is not None else f"{principal}:{uuid.uuid4()}"
    return own_id(principal, given)


def own_id(principal: str, given: str) -> str:
    """An id the caller names for itself at a peer (an offer's ``intent_id``), in the caller's form: as given
    when it is already, else prefixed (another principal's form included), as a context id is."""
    mine = f"{principal}:"
    return given if given.startswith(mine) else mine + given


def check_task(principal: str, task_id: str, task: Any) -> None:
    """Raise ``UnknownTask`` unless ``task`` (the peer's ``GetTask`` answer for ``task_id``; None when it
    had none) is that task, in one of ``principal``'s contexts."""
    found = task if isinstance(task, dict) else {}
    in_context = found.get("contextId")
    if found.get("id") != task_id or not (
        isinstance(in_context, str) and in_context.startswith(f"{principal}:")
    ):
        raise UnknownTask(task_id)
