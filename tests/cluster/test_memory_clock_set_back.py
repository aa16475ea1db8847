"""A note (``memory_store``) is kept for its lifetime by the process clock (``core/process_clock.py``), not
the wall clock, on both backends: set back 61 s (NTP stepping a fast clock, ``date -s``, a VM restored from a
snapshot), the wall clock kept a note readable (and undeleted by the purge) 61 s past its lifetime; an hour,
an hour. A process started after such a step cannot know it happened: a note whose stored making is in its
future (past the replicas' allowed skew on a shared store) is not read, and the purge deletes it (a note is
never kept longer than it was meant to be; as ``fact_store`` drops facts established in the future)."""

from __future__ import annotations

import time
from typing import Iterator

import pytest

from sentinel_mcp.core import process_clock
from sentinel_mcp.search.embedding import HashingEmbedder
from sentinel_mcp.search.search_service import SearchService
from sentinel_mcp.search.settings import SearchSettings

_time, _mono = time.time, time.monotonic
LIFE = 600.0
STEPS = [61, 3600, 86400 * 365]
NOTE = "Omar wants a window seat near the front"


@pytest.fixture(autouse=True)
def fresh_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    yield
    monkeypatch.undo()


def set_back(monkeypatch: pytest.MonkeyPatch, *, wall_by: float, later_by: float) -> None:
    monkeypatch.setattr(time, "time", lambda: _time() - wall_by + later_by)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + later_by)


def restarted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())


async def _stored(location: str) -> SearchService:
    s = await SearchService(location, SearchSettings(), embedder=HashingEmbedder(256)).open()
    await s.memory_store("alice", NOTE, ttl=LIFE, now=process_clock.now())
    assert [m["text"] for m in await s.memory_recent("alice", 5)] == [NOTE]
    return s


async def _seen(s: SearchService) -> list[int]:
    """How the note is still found: by recent, by search (words and vectors), and its rows in the table."""
    index = await s._idx()
    rows = await index.db.query("SELECT count(*) FROM passages WHERE source = 'memory'", ())
    return [len(await s.memory_recent("alice", 5)), len(await s.memory_search("alice", "window seat", 5)),
            int(rows[0][0])]


@pytest.mark.parametrize("wall_by", STEPS)
async def test_a_note_ends_after_its_life_when_the_clock_is_set_back(store_location, monkeypatch, wall_by):
    s = await _stored(store_location)
    try:
        set_back(monkeypatch, wall_by=wall_by, later_by=LIFE + 1)
        assert (await _seen(s))[:2] == [0, 0]
        await (await s._idx()).purge()
        assert await _seen(s) == [0, 0, 0]
    finally:
        await s.close()


@pytest.mark.parametrize("wall_by", STEPS)
async def test_a_note_is_kept_its_life_whatever_the_clock(store_location, monkeypatch, wall_by):
    s = await _stored(store_location)
    try:
        set_back(monkeypatch, wall_by=wall_by, later_by=LIFE - 60)
        await (await s._idx()).purge()
        assert await _seen(s) == [1, 1, 1]
    finally:
        await s.close()


@pytest.mark.parametrize("wall_by", [3600, 86400 * 365])
async def test_a_note_made_in_a_restarted_processs_future_is_not_kept(store_location, monkeypatch, wall_by):
    s = await _stored(store_location)
    await s.close()
    set_back(monkeypatch, wall_by=wall_by, later_by=LIFE + 1)
    restarted(monkeypatch)
    s = await SearchService(store_location, SearchSettings(), embedder=HashingEmbedder(256)).open()
    try:
        assert (await _seen(s))[:2] == [0, 0]
        await (await s._idx()).purge()
        assert await _seen(s) == [0, 0, 0]
    finally:
        await s.close()


async def test_a_note_is_kept_by_a_process_restarted_after_a_small_step(store_location, monkeypatch):
    """Within the allowed lead (none on SQLite: a second back is not the note's future) it is read."""
    s = await _stored(store_location)
    await s.close()
    set_back(monkeypatch, wall_by=61, later_by=120)
    restarted(monkeypatch)
    s = await SearchService(store_location, SearchSettings(), embedder=HashingEmbedder(256)).open()
    try:
        await (await s._idx()).purge()
        assert await _seen(s) == [1, 1, 1]
    finally:
        await s.close()
