"""A one-time console link (``identity/console_link.py``) is good for ``LINK_SECONDS`` after its making, and
a wall clock set back does not lengthen that. The link's file said its expiry on the wall clock and the
console compared it with ``time.time()``: set back 61 s (NTP stepping a fast clock, ``date -s``, a VM restored
from a snapshot), a link stayed good 61 s past its ten minutes, up to ten minutes more for a step just short
of the file's own bound. Now the console reads the process clock (never back while it lives), and the file
also holds the machine's boot clock at its making (``CLOCK_BOOTTIME``, which no one sets) with the boot's id:
a console started after the step, which cannot know it happened, still sees the link's true age. A link of
another boot, or without the boot clock on a machine that has one, is refused (the owner makes another)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Iterator

import pytest

from sentinel_mcp.core import process_clock
from sentinel_mcp.identity import console_link

_time, _mono, _gettime = time.time, time.monotonic, time.clock_gettime
STEPS = [61, 300, 599, 3600, 86400 * 365]


@pytest.fixture(autouse=True)
def fresh_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    yield
    monkeypatch.undo()


def set_back(monkeypatch: pytest.MonkeyPatch, *, wall_by: float, later_by: float) -> None:
    """``later_by`` seconds pass (every clock that counts time); the wall clock is ``wall_by`` behind."""
    monkeypatch.setattr(time, "time", lambda: _time() - wall_by + later_by)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + later_by)
    monkeypatch.setattr(time, "clock_gettime", lambda clock: _gettime(clock) + later_by)


def restarted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The console's process started after the step: its process clock begins at the wall clock's reading."""
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())


def test_the_machine_here_has_a_boot_clock():
    """The tests below that restart the console count on it (Linux: CLOCK_BOOTTIME and a boot id)."""
    assert console_link.boot_clock() is not None


@pytest.mark.parametrize("wall_by", STEPS)
def test_a_link_ends_after_its_time_when_the_clock_is_set_back(monkeypatch, tmp_path, wall_by):
    token = console_link.create(tmp_path)
    set_back(monkeypatch, wall_by=wall_by, later_by=console_link.LINK_SECONDS + 1)
    assert not console_link.claim(tmp_path, token)


@pytest.mark.parametrize("wall_by", STEPS)
def test_a_link_ends_after_its_time_for_a_console_started_after_the_step(monkeypatch, tmp_path, wall_by):
    token = console_link.create(tmp_path)
    set_back(monkeypatch, wall_by=wall_by, later_by=console_link.LINK_SECONDS + 1)
    restarted(monkeypatch)
    assert not console_link.claim(tmp_path, token)


@pytest.mark.parametrize("wall_by", STEPS)
def test_a_link_is_good_within_its_time_whatever_the_clock(monkeypatch, tmp_path, wall_by):
    """The other side: a console that lived through the step takes the link within its time."""
    token = console_link.create(tmp_path)
    set_back(monkeypatch, wall_by=wall_by, later_by=console_link.LINK_SECONDS - 60)
    assert console_link.claim(tmp_path, token)


def test_a_link_is_good_within_its_time_for_a_console_started_after_a_small_step(monkeypatch, tmp_path):
    token = console_link.create(tmp_path)
    set_back(monkeypatch, wall_by=61, later_by=console_link.LINK_SECONDS - 120)
    restarted(monkeypatch)
    assert console_link.claim(tmp_path, token)


def test_a_link_made_after_a_step_back_ends_by_the_same_clocks(monkeypatch, tmp_path):
    set_back(monkeypatch, wall_by=86400 * 365, later_by=0)
    token = console_link.create(tmp_path)
    set_back(monkeypatch, wall_by=86400 * 365, later_by=console_link.LINK_SECONDS + 1)
    restarted(monkeypatch)
    assert not console_link.claim(tmp_path, token)


def _only_file(directory: Path) -> Path:
    [path] = list((directory / console_link.LINK_DIR).iterdir())
    return path


def _rewrite(path: Path, record: object) -> None:
    os.chmod(path, 0o600)
    path.write_text(json.dumps(record))


def test_a_link_of_another_boot_is_refused(monkeypatch, tmp_path):
    token = console_link.create(tmp_path)
    made = console_link.boot_clock()
    assert made is not None
    monkeypatch.setattr(console_link, "boot_clock", lambda: ("another-boot", made[1]))
    assert not console_link.claim(tmp_path, token)


@pytest.mark.parametrize("boot", [
    None, {}, {"id": "x"}, {"at": 1.0}, [1, 2], "boot", {"id": 1, "at": 1.0}, {"id": "x", "at": True},
    {"id": "x", "at": "1"}, {"id": "x", "at": float("nan")}, {"id": "x", "at": 1},
])
def test_a_link_without_this_boots_clock_is_refused(monkeypatch, tmp_path, boot):
    """A file without the boot clock (hand-written, or made by a version before it) or with it misspelt:
    refused on a machine that has a boot clock, whatever its wall-clock expiry says."""
    token = console_link.create(tmp_path)
    path = _only_file(tmp_path)
    record = json.loads(path.read_text())
    if boot is None:
        del record["boot"]
    else:
        record["boot"] = boot
    _rewrite(path, record)
    assert not console_link.claim(tmp_path, token)


@pytest.mark.parametrize("shift", [-(console_link.LINK_SECONDS + 1), 1.0, 3600.0])
def test_a_link_whose_boot_clock_is_not_within_its_time_is_refused(tmp_path, shift):
    """Made longer ago than its time, or in the boot clock's future (no link can be): refused."""
    token = console_link.create(tmp_path)
    path = _only_file(tmp_path)
    record = json.loads(path.read_text())
    record["boot"]["at"] += shift
    _rewrite(path, record)
    assert not console_link.claim(tmp_path, token)


def test_the_stored_expiry_is_never_past_the_links_time(tmp_path):
    """A file saying a longer life than a link has is refused (the expiry is never lengthened)."""
    token = console_link.create(tmp_path)
    path = _only_file(tmp_path)
    record = json.loads(path.read_text())
    record["expires"] += console_link.LINK_SECONDS
    _rewrite(path, record)
    assert not console_link.claim(tmp_path, token)
