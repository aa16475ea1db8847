"""A consent granted on a SQLite store is stamped and timed by the process clock, the clock it is checked by
(``gateway/consents.py``). It was stamped by the wall clock: in a process that lived through a step back of
the wall clock (the process clock then runs ahead of it by the step), a consent granted for an hour after a
step of more than an hour was expired at once, and one granted for longer lost the step from its life."""

from __future__ import annotations

import time
from typing import Iterator

import pytest

from sentinel_mcp.core import process_clock
from sentinel_mcp.gateway.consents import ConsentBook

_time, _mono = time.time, time.monotonic


@pytest.fixture(autouse=True)
def fresh_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    yield
    monkeypatch.undo()


def set_back(monkeypatch: pytest.MonkeyPatch, *, wall_by: float, later_by: float) -> None:
    monkeypatch.setattr(time, "time", lambda: _time() - wall_by + later_by)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + later_by)


@pytest.mark.parametrize("wall_by", [61, 3600, 86400 * 365])
def test_a_consent_granted_after_a_step_back_lives_as_long_as_asked(tmp_path, monkeypatch, wall_by):
    book = ConsentBook(tmp_path / "consents.db")
    try:
        process_clock.now()  # the process lived before the step
        set_back(monkeypatch, wall_by=wall_by, later_by=0)
        book.grant("alice", "location", expires_in=60)
        assert book.current("alice", "location", "*") is not None
        set_back(monkeypatch, wall_by=wall_by, later_by=59)
        assert book.current("alice", "location", "*") is not None
        set_back(monkeypatch, wall_by=wall_by, later_by=61)
        assert book.current("alice", "location", "*") is None
    finally:
        book.close()
