"""The one warm spare check child (spare_child): only while spares are on (the console runs), at most one,
bounded as any check child (its own process group, memory, CPU, no core), taken by the next check and never
handed out twice (a child serves one request: nothing of one principal's check is left for the next), and
killed with its group when spares stop (the gateway's end). Real children, real SWI-Prolog; asserted on
process ids, limits and answers, never on the clock."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from sentinel_mcp.policy import spare_child
from sentinel_mcp.policy.check_process import CHILD, WALL_SECONDS, check_isolated
from sentinel_mcp.policy.checker import check_paths
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.load_rehearsal import MEMORY_BYTES

pytestmark = pytest.mark.timeout(180)
BOOKINGS = Path(__file__).parent / "rulebases" / "bookings.pl"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def _ready_spare() -> int:
    """The spare's pid once it is there (started by ``prepare``)."""
    spare_child.prepare()
    for _ in range(600):
        pid = spare_child.spare_pid()
        if pid is not None:
            return pid
        await asyncio.sleep(0.05)
    raise AssertionError("no spare was started")


async def _waiting_for_request(pid: int) -> None:
    """Until the spare is warm: blocked reading its stdin (its request), SWI-Prolog started."""
    for _ in range(1200):
        try:
            wchan = Path(f"/proc/{pid}/wchan").read_text()
            threads = len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            break
        if "pipe" in wchan and threads > 1:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the spare never came to wait for its request")


async def test_no_spare_while_spares_are_off(tmp_path: Path) -> None:
    spare_child.prepare()
    await check_isolated([BOOKINGS])
    await asyncio.sleep(0)
    assert spare_child.spare_pid() is None


async def test_a_check_takes_the_spare_and_a_fresh_one_is_readied(tmp_path: Path) -> None:
    f = tmp_path / "rb.pl"
    f.write_text(BOOKINGS.read_text() + "guard('bk__x', [], (\\+ fail)).\nunused(1).\n")
    here = [p.model_dump() for p in await check_paths(shared_engine(), [f])]
    spare_child.enable(CHILD, WALL_SECONDS)
    try:
        first = await _ready_spare()
        await _waiting_for_request(first)
        there = await check_isolated([f])
        assert [p.model_dump() for p in there] == here  # the spare's answer is the checker's
        assert not _alive(first)  # it served one request and ended
        second = await _ready_spare()  # readied after the check
        assert second != first
        again = await check_isolated([f])  # takes the second spare, never the first again
        assert [p.model_dump() for p in again] == here
        assert not _alive(second)
        # a check with another bound than the spare was made for starts its own child: the spare waits on
        third = await _ready_spare()
        await check_isolated([f], seconds=WALL_SECONDS + 1)
        assert spare_child.spare_pid() == third and _alive(third)
    finally:
        await spare_child.stop()


async def test_the_spare_is_bounded_as_a_check_child_and_stops_with_its_group() -> None:
    spare_child.enable(CHILD, WALL_SECONDS)
    try:
        pid = await _ready_spare()
        await _waiting_for_request(pid)
        limits = Path(f"/proc/{pid}/limits").read_text()
        cpu = int(WALL_SECONDS) + 5
        assert f"Max cpu time              {cpu}                   {cpu}" in limits, limits
        assert f"Max address space         {MEMORY_BYTES}" in limits, limits
        assert "Max core file size        0" in limits, limits
        assert os.getpgid(pid) == pid  # a process group of its own, killed whole
        spare_child.prepare()  # never a second spare
        await asyncio.sleep(0.5)
        assert spare_child.spare_pid() == pid
    finally:
        await spare_child.stop()
    assert not _alive(pid)
    assert spare_child.spare_pid() is None
    spare_child.prepare()  # stopped: none again
    await asyncio.sleep(0)
    assert spare_child.spare_pid() is None


def _dead_now(pid: int) -> None:
    """Until ``pid`` has ended (a zombie not yet reaped), waited for without letting the event loop run: the
    loop has not yet been told it ended, as when a check comes right after the spare died."""
    for _ in range(3000):
        if not _alive(pid):
            return
        time.sleep(0.001)
    raise AssertionError(f"{pid} did not end")


@pytest.mark.parametrize("when", ["starting", "warm"])
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
async def test_a_spare_that_died_before_it_was_taken_is_never_used(tmp_path: Path, when: str, sig: int):
    """The spare killed (the OOM killer, a signal) while it starts or once it waits for its request, and a
    check coming before the event loop heard of it: that check runs in a child started for it and answers."""
    f = tmp_path / "rb.pl"
    f.write_text(BOOKINGS.read_text() + "guard('bk__x', [], (\\+ fail)).\nunused(1).\n")
    here = [p.model_dump() for p in await check_paths(shared_engine(), [f])]
    spare_child.enable(CHILD, WALL_SECONDS)
    try:
        pid = await _ready_spare()
        if when == "warm":
            await _waiting_for_request(pid)
        os.killpg(pid, sig)
        _dead_now(pid)
        there = await check_isolated([f])
        assert [p.model_dump() for p in there] == here
    finally:
        await spare_child.stop()
