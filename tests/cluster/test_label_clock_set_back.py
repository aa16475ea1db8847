"""Conversation labels on a SQLite store (one machine) go idle by the process clock
(``core/process_clock.py``): the wall clock, set back 61 s (NTP stepping a fast clock, ``date -s``, a VM
restored from a snapshot), kept a label naming its conversation (its facts, its confirmations) 61 s past its
idle time to live; an hour, an hour. A server store's is the database's clock (``test_label_clock.py``)."""

from __future__ import annotations

import time
from typing import Iterator

import pytest

from sentinel_mcp.core import process_clock
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.conversation_names import SharedLabels
from sentinel_mcp.storage.open import release

_time, _mono = time.time, time.monotonic
IDLE = 3600.0


@pytest.fixture(autouse=True)
def fresh_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    yield
    monkeypatch.undo()


def set_back(monkeypatch: pytest.MonkeyPatch, *, wall_by: float, later_by: float) -> None:
    monkeypatch.setattr(time, "time", lambda: _time() - wall_by + later_by)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + later_by)


@pytest.mark.parametrize("wall_by", [61, 3600, 86400 * 365])
async def test_a_label_goes_idle_by_the_process_clock(tmp_path, monkeypatch, wall_by):
    db = open_database(str(tmp_path / "store.db"), "labels")
    try:
        await SharedLabels.open(db, IDLE)
        labels = SharedLabels(db, IDLE, refresh=0)
        first = await labels.session("alice", "trip")
        set_back(monkeypatch, wall_by=wall_by, later_by=IDLE + 1)
        assert await labels.current("alice", "trip") is None
        fresh = await labels.session("alice", "trip")
        assert fresh != first and fresh.startswith("alice/label-trip-")
    finally:
        await release(db)


@pytest.mark.parametrize("wall_by", [61, 3600])
async def test_a_label_in_use_keeps_its_conversation_whatever_the_clock(tmp_path, monkeypatch, wall_by):
    db = open_database(str(tmp_path / "store.db"), "labels")
    try:
        await SharedLabels.open(db, IDLE)
        labels = SharedLabels(db, IDLE, refresh=0)
        first = await labels.session("alice", "trip")
        set_back(monkeypatch, wall_by=wall_by, later_by=IDLE - 60)
        assert await labels.current("alice", "trip") == first
        assert await labels.session("alice", "trip") == first
    finally:
        await release(db)
