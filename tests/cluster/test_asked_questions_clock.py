"""A remembered question (``gateway/shared_asked_questions.py``) answers nothing past its ``max_age``
whatever the wall clock does. On SQLite its age is by the process clock (``core/process_clock.py``), on
PostgreSQL by the database's: the wall clock set back an hour (or a year) kept a question asked answerable for
the step, and a row stamped later than the reader's clock (written before the clock went back, or by a
replica whose clock runs ahead) has an age nobody knows, so it is none."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

import pytest

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.decision import Question
from sentinel_mcp.gateway.shared_asked_questions import CLOCK_SKEW, SharedAskedQuestions
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.open import release

_time, _mono = time.time, time.monotonic
MAX_AGE = 60.0
KEY = b"k" * 32
Q = Question(key="policy.ask.c", message="Which colour?", meta={"kind": "ask", "predicate": "colour"},
             requested_schema={"type": "object", "properties": {"answer": {"enum": ["red", "green"]}}})


@pytest.fixture(autouse=True)
def fresh_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    yield
    monkeypatch.undo()


def set_back(monkeypatch: pytest.MonkeyPatch, *, wall_by: float, later_by: float) -> None:
    monkeypatch.setattr(time, "time", lambda: _time() - wall_by + later_by)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + later_by)


async def opened(location: str | Path) -> tuple[object, SharedAskedQuestions]:
    db = open_database(location, "nonces")
    return db, await SharedAskedQuestions.open(db, MAX_AGE, 10, key=KEY)


@pytest.mark.parametrize("wall_by", [61, 3600, 86400 * 365])
async def test_a_question_answers_nothing_past_its_age_when_the_clock_is_set_back(tmp_path, monkeypatch,
                                                                                  wall_by):
    db, book = await opened(tmp_path / "store.db")
    try:
        await book.remember("alice", "alice/s", [("policy.ask.c", Q)])
        assert await book.get("alice", "alice/s", "policy.ask.c") == Q
        set_back(monkeypatch, wall_by=wall_by, later_by=MAX_AGE + CLOCK_SKEW + 1)
        assert await book.get("alice", "alice/s", "policy.ask.c") is None
    finally:
        await release(db)


@pytest.mark.parametrize("ahead", [CLOCK_SKEW + 1, 3600, 86400 * 365])
async def test_a_row_from_the_readers_future_is_none(tmp_path, monkeypatch, ahead):
    """Written when the clock read ``ahead`` later (then set back, and the gateway restarted; or another
    replica's clock running ahead): its age is unknown, it is never a question asked."""
    db, book = await opened(tmp_path / "store.db")
    try:
        monkeypatch.setattr(time, "time", lambda: _time() + ahead)
        await book.remember("alice", "alice/s", [("policy.ask.c", Q)])
        monkeypatch.setattr(time, "time", _time)
        monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())  # a restart
        assert await book.get("alice", "alice/s", "policy.ask.c") is None
        await book.remember("alice", "alice/s", [("policy.ask.c", Q)])  # asked anew: a question again
        assert await book.get("alice", "alice/s", "policy.ask.c") == Q
    finally:
        await release(db)


@pytest.mark.parametrize("wall_by", [61, 3600, 86400 * 365])
async def test_within_its_age_a_question_is_remembered_whatever_the_clock(store_location, monkeypatch,
                                                                          wall_by):
    db, book = await opened(store_location)
    try:
        await book.remember("alice", "alice/s", [("policy.ask.c", Q)])
        set_back(monkeypatch, wall_by=wall_by, later_by=MAX_AGE / 2)
        assert await book.get("alice", "alice/s", "policy.ask.c") == Q
        other = SharedAskedQuestions(db, MAX_AGE, 10, key=KEY)  # another replica, its clock set back too
        assert await other.get("alice", "alice/s", "policy.ask.c") == Q
    finally:
        await release(db)
