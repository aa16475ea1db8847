"""A console device token (``console/sign_in_devices.py``) counts for ``DEVICE_SECONDS`` from its issue by the
process clock: a wall clock set back does not lengthen it, a token issued ahead of this process's clock (past
a replica's small lead) is none, and its issue time is signed (not to be edited) and spelt one way only."""

from __future__ import annotations

import time
from typing import Iterator

import pytest

from sentinel_mcp.console.sign_in_devices import DEVICE_SECONDS, ISSUED_AHEAD, SignInDevices
from sentinel_mcp.core import process_clock

_time, _mono = time.time, time.monotonic
STEPS = [61, 3600, 86400 * 365]


@pytest.fixture(autouse=True)
def fresh_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    yield
    monkeypatch.undo()


def set_back(monkeypatch: pytest.MonkeyPatch, *, wall_by: float, later_by: float) -> None:
    monkeypatch.setattr(time, "time", lambda: _time() - wall_by + later_by)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + later_by)


@pytest.mark.parametrize("wall_by", STEPS)
def test_a_token_ends_after_its_time_when_the_clock_is_set_back(monkeypatch, wall_by):
    devices = SignInDevices(None)
    token = devices.issue("bob")
    assert devices.device(token, "bob")
    set_back(monkeypatch, wall_by=wall_by, later_by=DEVICE_SECONDS + 1)
    assert devices.device(token, "bob") is None


@pytest.mark.parametrize("wall_by", STEPS)
def test_a_token_counts_within_its_time_whatever_the_clock(monkeypatch, wall_by):
    devices = SignInDevices(None)
    token = devices.issue("bob")
    set_back(monkeypatch, wall_by=wall_by, later_by=DEVICE_SECONDS - 60)
    assert devices.device(token, "bob") == token.split(".")[0]


def test_a_token_issued_ahead_of_this_clock_is_none(monkeypatch):
    """Issued by a replica far ahead, or before a restart that followed a step back: not yet issued here."""
    devices = SignInDevices(None)
    monkeypatch.setattr(time, "time", lambda: _time() + ISSUED_AHEAD + 5)
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    ahead = devices.issue("bob")
    monkeypatch.undo()
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    assert devices.device(ahead, "bob") is None
    assert devices.device(devices.issue("bob"), "bob")


def test_a_token_a_little_ahead_counts(monkeypatch):
    devices = SignInDevices(None)
    monkeypatch.setattr(time, "time", lambda: _time() + ISSUED_AHEAD / 2)
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    ahead = devices.issue("bob")
    monkeypatch.undo()
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    assert devices.device(ahead, "bob")


def test_the_issue_time_is_signed_and_spelt_one_way():
    devices = SignInDevices(None)
    before = process_clock.now()
    token = devices.issue("bob")
    after = process_clock.now()
    device, issued, mac = token.split(".")
    assert issued.isascii() and issued.isdigit() and int(before) <= int(issued) <= after
    later = str(int(issued) + 1)
    spellings = [
        f"{device}.{later}.{mac}",  # a later issue: another MAC
        f"{device}.0{issued}.{mac}", f"{device}.+{issued}.{mac}", f"{device}. {issued}.{mac}",
        f"{device}.{issued} .{mac}", f"{device}.{issued}.0.{mac}", f"{device}.{issued}.{mac}.",
        f"{device}.{issued.translate(str.maketrans('0123456789', '٠١٢٣٤٥٦٧٨٩'))}.{mac}",
        f"{device}.{issued}_0.{mac}", f"{device}.-{issued}.{mac}", f"{device}..{mac}", f"{device}.{mac}",
        f"{device}.{'9' * 13}.{mac}", f"{device}.{issued}.{mac.upper()}", f".{issued}.{mac}",
        f"{device}!.{issued}.{mac}", f"{device}.{issued}.{mac}\n", token + "0", token[:-1],
    ]
    for spelt in spellings:
        assert devices.device(spelt, "bob") is None, spelt
    assert devices.device(token, "bob") == device
    assert devices.device(token, "alice") is None and devices.device(token, None) is None
