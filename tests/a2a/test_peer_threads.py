"""``peer_threads``: whose context and task at a peer a message continues (the gateway-level test, with a real
Sentinel and an agent that keeps its tasks, is ``tests/identity/test_peer_threads_per_principal.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from sentinel_mcp.a2a.peer_threads import UnknownTask, check_task, context


def test_a_context_id_is_always_in_the_callers_form() -> None:
    assert context("alice", "trip", None) == "alice:trip"
    assert context("alice", "alice:trip", None) == "alice:trip"  # echoed back by the peer: the same context
    assert context("bob", "alice:trip", None) == "bob:alice:trip"  # another's: a context of the caller's own
    assert context("bob", "trip", None) != context("alice", "trip", None)
    made_up = context("alice", None, None)
    assert made_up is not None and made_up.startswith("alice:") and made_up != context("alice", None, None)
    empty = context("alice", "", None)
    assert empty is not None and empty != "alice:" and empty.startswith("alice:")  # empty names none
    assert context("alice", None, "task-1") is None  # the peer takes it from the task


def test_a_task_continues_only_in_a_context_of_the_callers() -> None:
    check_task("alice", "t-1", {"id": "t-1", "contextId": "alice:trip"})
    refusals = []
    for who, task in (
        ("bob", {"id": "t-1", "contextId": "alice:trip"}),  # another's
        ("bob", {"id": "t-1", "contextId": "bob"}),  # no context of the caller's form
        ("alice", {"id": "t-1", "contextId": "alice-x:trip"}),  # another principal whose name starts alike
        ("alice", {"id": "t-2", "contextId": "alice:trip"}),  # the peer answered with another task
        ("alice", None),  # the peer does not know it
        ("alice", {"id": "t-1"}),
        ("alice", {"id": "t-1", "contextId": ["alice:trip"]}),
        ("alice", "alice:trip"),
    ):
        with pytest.raises(UnknownTask) as e:
            check_task(who, "t-1", task)
        refusals.append(str(e.value))
    assert len(set(refusals)) == 1 and "nothing was sent" in refusals[0]  # all read alike


def test_a_refusal_shows_the_id_it_was_given_safely() -> None:
    hostile: Any = "t\u202e\x1b[2J" + "x" * 500
    with pytest.raises(UnknownTask) as e:
        check_task("alice", hostile, None)
    said = str(e.value)
    assert "\u202e" not in said and "\x1b" not in said and len(said) < 400
