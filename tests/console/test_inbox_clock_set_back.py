"""An inbox question and the answer waiting for its retry live for the inbox's time to live by the process
clock (``core/process_clock.py``), not the wall clock: set back an hour, the wall clock kept a question open,
and an approval given in the console waiting for the client's retry, an hour longer than its ten minutes (the
retry an hour later still passed). Measured as the request state and consents are; across replicas the
store's own clock judges (``cluster_inbox``)."""

from __future__ import annotations

import time
from typing import Iterator

import pytest

from sentinel_mcp.console import inbox
from sentinel_mcp.core import process_clock
from sentinel_mcp.core.decision import Answer, Question

_time, _mono = time.time, time.monotonic
Q = [Question(key="ok", message="Go?", requested_schema={"type": "object", "properties": {}})]
CALL = {"principal": "alice", "session": "s", "tool": "tb__delete_thing", "arguments": {"n": 1},
        "version": "v"}


@pytest.fixture(autouse=True)
def fresh_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    yield
    monkeypatch.undo()


def set_back(monkeypatch: pytest.MonkeyPatch, *, wall_by: float, later_by: float) -> None:
    monkeypatch.setattr(time, "time", lambda: _time() - wall_by + later_by)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + later_by)


def ask(box: inbox.Inbox) -> inbox.InboxItem:
    return box.post(client=None, shown_arguments=CALL["arguments"], reason="confirm", questions=Q,
                    kind="held", **CALL)


@pytest.mark.parametrize("wall_by", [3600, 61, 86400 * 365])
async def test_an_answer_waiting_for_its_retry_ends_after_the_ttl_when_set_back(monkeypatch, wall_by):
    box = inbox.Inbox(ttl=60)
    item = ask(box)
    assert await box.give(item, {"ok": Answer(action="accept", content={}, provenance="user")})
    set_back(monkeypatch, wall_by=wall_by, later_by=61)
    assert not item.waiting_for_retry
    assert await box.take(**CALL) is None


@pytest.mark.parametrize("wall_by", [3600, 61, 86400 * 365])
async def test_a_question_closes_after_the_ttl_when_the_clock_is_set_back(monkeypatch, wall_by):
    box = inbox.Inbox(ttl=60)
    item = ask(box)
    set_back(monkeypatch, wall_by=wall_by, later_by=61)
    assert not item.open and box.get("alice", item.id) is None and box.open_items("alice") == []
    assert not await box.give(item, {"ok": Answer(action="accept", content={}, provenance="user")})


async def test_within_the_ttl_the_answer_is_taken_once_whatever_the_clock(monkeypatch):
    box = inbox.Inbox(ttl=60)
    item = ask(box)
    assert await box.give(item, {"ok": Answer(action="accept", content={}, provenance="user")})
    set_back(monkeypatch, wall_by=3600, later_by=30)
    assert (await box.take(**CALL) or {}).get("ok") is not None
    assert await box.take(**CALL) is None
