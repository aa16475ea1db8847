"""The wall clock set back does not lengthen a consent granted for a while or a sealed request state: both are
measured by the process clock that never goes back (``core/process_clock.py``); a consent granted before a
restart at a time later than the clock (set back while the gateway was down) does not count until the clock
reaches it again, so it lasts no longer than it was granted for."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

import pytest

from sentinel_mcp.core import process_clock
from sentinel_mcp.gateway.consents import ConsentBook
from sentinel_mcp.gateway.request_state import RequestStateSeal

_time, _mono = time.time, time.monotonic


@pytest.fixture(autouse=True)
def fresh_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    yield
    monkeypatch.undo()


def set_back(monkeypatch: pytest.MonkeyPatch, *, wall_by: float, later_by: float) -> None:
    monkeypatch.setattr(time, "time", lambda: _time() - wall_by + later_by)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + later_by)


def test_a_consent_for_a_minute_ends_after_a_minute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    book = ConsentBook(tmp_path / "consents.db")
    try:
        book.grant("alice", "messages", "travel", expires_in=60)
        assert book.current("alice", "messages", "travel")
        set_back(monkeypatch, wall_by=3600, later_by=61)
        assert book.current("alice", "messages", "travel") is None
        assert book.list("alice") == []
    finally:
        book.close()


def test_a_consent_granted_in_the_future_counts_only_from_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = ConsentBook(tmp_path / "consents.db")
    try:
        book.grant("alice", "messages", "travel", expires_in=60)
        set_back(monkeypatch, wall_by=3600, later_by=0)  # set back by an hour, then a restart
        monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
        assert book.current("alice", "messages", "travel") is None
        assert book.list("alice") == []
    finally:
        book.close()


def test_a_sealed_state_expires_by_the_process_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    seal = RequestStateSeal(max_age=60)
    token = seal.seal({"principal": "alice"})
    opened = seal.open(token)
    assert opened is not None
    set_back(monkeypatch, wall_by=3600, later_by=61)
    assert seal.open(token) is None
    assert not seal.consume(opened)  # its nonce is past its expiry too
