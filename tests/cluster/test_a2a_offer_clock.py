"""An A2A offer's row (``a2a/shared_offers.py``) names its principal for ``ttl`` only, whatever the wall
clock does. Its expiry is set and read by the database's clock on PostgreSQL and the process clock on SQLite:
set by the writer's wall clock, a clock set back an hour (or a year) kept a crashed replica's offer naming its
principal for the step; a row expiring later than ``ttl`` from the reader's now was stamped by a clock ahead
of it (or before it went back), so it names nobody."""

from __future__ import annotations

import time
from typing import Iterator

import pytest

from sentinel_mcp.a2a import shared_offers
from sentinel_mcp.a2a.shared_offers import SharedOffers
from sentinel_mcp.core import process_clock
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.open import release

_time, _mono = time.time, time.monotonic
TTL = 60.0
KEY = b"k" * 32


@pytest.fixture(autouse=True)
def fresh_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    yield
    monkeypatch.undo()


def set_back(monkeypatch: pytest.MonkeyPatch, *, wall_by: float, later_by: float) -> None:
    monkeypatch.setattr(time, "time", lambda: _time() - wall_by + later_by)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + later_by)


@pytest.mark.parametrize("wall_by", [61, 3600, 86400 * 365])
async def test_an_offer_names_nobody_past_its_ttl_when_the_clock_is_set_back(tmp_path, monkeypatch, wall_by):
    db = open_database(tmp_path / "store.db", "a2a_offers")
    try:
        offers = await SharedOffers.open(db, TTL, KEY)
        await offers.add("ctx-1", "rover")
        assert await offers.principal_of("ctx-1") == "rover"
        set_back(monkeypatch, wall_by=wall_by, later_by=TTL + 1)
        assert await offers.principal_of("ctx-1") is None
    finally:
        await release(db)


@pytest.mark.parametrize("ahead", [getattr(shared_offers, "CLOCK_SKEW", 5.0) + 1, 3600, 86400 * 365])
async def test_an_offer_stamped_in_the_readers_future_names_nobody(tmp_path, monkeypatch, ahead):
    db = open_database(tmp_path / "store.db", "a2a_offers")
    try:
        offers = await SharedOffers.open(db, TTL, KEY)
        monkeypatch.setattr(time, "time", lambda: _time() + ahead)
        await offers.add("ctx-1", "rover")
        monkeypatch.setattr(time, "time", _time)
        monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())  # a restart
        assert await offers.principal_of("ctx-1") is None
        await offers.add("ctx-2", "rover")  # offered anew: its principal's
        assert await offers.principal_of("ctx-2") == "rover"
    finally:
        await release(db)


@pytest.mark.parametrize("wall_by", [61, 3600, 86400 * 365])
async def test_within_its_ttl_an_offer_names_its_principal_whatever_the_clock(store_location, monkeypatch,
                                                                             wall_by):
    db = open_database(store_location, "a2a_offers")
    try:
        offers = await SharedOffers.open(db, TTL, KEY)
        await offers.add("ctx-1", "rover")
        set_back(monkeypatch, wall_by=wall_by, later_by=TTL / 2)
        assert await offers.principal_of("ctx-1") == "rover"
        assert await SharedOffers(db, TTL, KEY).principal_of("ctx-1") == "rover"  # another replica
    finally:
        await release(db)
