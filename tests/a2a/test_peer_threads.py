"""``PeerThreads``: whose context and task at a peer a message continues (the gateway-level test is
``tests/identity/test_peer_threads_per_principal.py``)."""

from __future__ import annotations

import pytest

from sentinel_mcp.a2a.peer_threads import TASKS_PER_PRINCIPAL, PeerThreads, UnknownTask

PEER, OTHER_PEER = "http://127.0.0.1:1/a2a", "http://127.0.0.1:2/a2a"


def test_a_context_id_is_always_in_the_callers_form() -> None:
    c = PeerThreads.context
    assert c("alice", "trip", None) == "alice:trip"
    assert c("alice", "alice:trip", None) == "alice:trip"  # echoed back by the peer: the same context
    assert c("bob", "alice:trip", None) == "bob:alice:trip"  # another's: a context of the caller's own
    assert c("bob", "trip", None) != c("alice", "trip", None)
    made_up = c("alice", None, None)
    assert made_up is not None and made_up.startswith("alice:") and made_up != c("alice", None, None)
    assert c("alice", "", None) is not None and c("alice", "", None) != "alice:"  # empty names none
    assert c("alice", None, "task-1") is None  # the peer takes it from the task


def test_a_task_continues_only_for_the_principal_and_peer_it_was_answered_to() -> None:
    threads = PeerThreads()
    threads.answered("alice", PEER, {"task": {"id": "t-1", "contextId": "alice:x"}})
    threads.answered("alice", PEER, {"message": {"taskId": "t-2"}})
    threads.check_task("alice", PEER, "t-1")
    threads.check_task("alice", PEER, "t-2")
    threads.check_task("bob", PEER, None)  # no task named: nothing to check
    refusals = []
    for who, peer, task in (("bob", PEER, "t-1"), ("alice", OTHER_PEER, "t-1"), ("alice", PEER, "t-3")):
        with pytest.raises(UnknownTask) as e:
            threads.check_task(who, peer, task)
        refusals.append(str(e.value).replace(task, "<id>"))
    assert len(set(refusals)) == 1  # another's, another peer's and a made-up one read alike


@pytest.mark.parametrize("answer", [None, "text", {"task": None}, {"task": {"id": 7}}, {"task": {"id": ""}},
                                    {"task": {"id": "x" * 1001}}, {"message": {"taskId": ["t"]}}])
def test_an_answer_naming_no_usable_task_is_remembered_as_none(answer: object) -> None:
    threads = PeerThreads()
    threads.answered("alice", PEER, answer)
    assert threads._tasks.get("alice", {}) == {}


def test_each_principal_keeps_its_most_recent_tasks_and_no_one_elses_are_pushed_out() -> None:
    threads = PeerThreads()
    threads.answered("alice", PEER, {"task": {"id": "hers"}})
    for n in range(TASKS_PER_PRINCIPAL + 5):
        threads.answered("bob", PEER, {"task": {"id": f"b-{n}"}})
    threads.check_task("alice", PEER, "hers")  # bob's flood evicts only his own
    with pytest.raises(UnknownTask):
        threads.check_task("bob", PEER, "b-0")
    threads.check_task("bob", PEER, f"b-{TASKS_PER_PRINCIPAL + 4}")
    assert len(threads._tasks["bob"]) == TASKS_PER_PRINCIPAL
