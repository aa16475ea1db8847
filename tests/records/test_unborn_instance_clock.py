"""A half-made instance directory (``.new-<id>``: made, not yet locked and published) is swept by whether
anyone can still be making it, not by the wall clock. Before, one older than 60 s by the wall clock and not
locked was removed: a clock set forward (61 s, an hour, a year) removed a live gateway's directory between
its making and its lock (its start then failed: "could not lock the new instance directory"), and one set
back kept a dead one's that much longer. Now a gateway makes and locks its directory holding a shared lock of
the instances directory (``.claiming``); the sweep takes it exclusively, so any unlocked ``.new-`` directory
it then finds is abandoned, whatever its age, and while a gateway is making one the sweep leaves them all."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import pytest

from sentinel_mcp.storage import instances

_time = time.time
STEPS = [61.0, 3600.0, 365 * 86400.0]


def half_made(root: Path) -> Path:
    base = instances.instances_dir(root)
    base.mkdir(parents=True, exist_ok=True)
    hidden = base / f".new-20261205T150000-{os.getpid()}-abcdef"
    hidden.mkdir()
    return hidden


@pytest.mark.parametrize("by", STEPS)
def test_one_being_made_is_kept_with_the_clock_set_forward(tmp_path, monkeypatch, by) -> None:
    hidden = half_made(tmp_path)
    # a gateway between making its directory and locking it: it holds the claim (as ``Instance.claim`` does)
    with instances.claiming(instances.instances_dir(tmp_path), exclusive=False):
        monkeypatch.setattr(time, "time", lambda: _time() + by)
        instances.settle_dead(tmp_path)
        assert hidden.is_dir()


@pytest.mark.parametrize("by", [0.0, *STEPS])
def test_an_abandoned_one_is_removed_with_the_clock_set_back(tmp_path, monkeypatch, by) -> None:
    hidden = half_made(tmp_path)
    monkeypatch.setattr(time, "time", lambda: _time() - by)
    instances.settle_dead(tmp_path)
    assert not hidden.exists()


def test_a_locked_one_is_never_removed(tmp_path) -> None:
    hidden = half_made(tmp_path)
    fd = os.open(hidden / instances.LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        instances.settle_dead(tmp_path)
        assert hidden.is_dir()
    finally:
        os.close(fd)


def test_claims_still_publish_and_release(tmp_path) -> None:
    one = instances.Instance.claim(tmp_path)
    two = instances.Instance.claim(tmp_path)
    try:
        assert one.dir.is_dir() and two.dir.is_dir() and instances.is_live(one.dir)
        assert not [p for p in instances.instances_dir(tmp_path).iterdir() if p.name.startswith(".new-")]
    finally:
        one.release()
        two.release()
