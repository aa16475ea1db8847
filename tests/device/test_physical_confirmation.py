"""Volume Up answers one question: the phone shows nothing, so a press cannot say which action it allows.
Before, every risky action waiting at once had its own ``getevent`` stream, and the one press the person
gave for the question they saw confirmed every other action waiting then too (another caller's, whose
question only that caller saw). Now one question waits for the key at a time, per phone."""

from __future__ import annotations

import threading
import time

import anyio
import pytest
from tests.device.device_helpers import adb_server, connect

pytestmark = pytest.mark.timeout(60)


def press_once_when_all_wait(fake, waiting: int) -> threading.Thread:
    """One press, once ``waiting`` questions listen for the key (or, bounded, once one does)."""

    def run() -> None:
        for _ in range(1000):
            if fake.key_waiting:
                break
            time.sleep(0.01)
        for _ in range(150):
            if fake.key_waiters >= waiting:
                break
            time.sleep(0.01)
        fake.press_key()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


async def test_one_volume_up_press_confirms_one_action(fake_adb, tmp_path):
    # the press comes after the first question listened for ~1.5 s (a second one never listens beside it): the
    # bound leaves a loaded machine room to carry it (at 3 s the first question could time out too)
    server = adb_server(fake_adb, tmp_path, physical_confirmation=True, confirm_timeout=15)
    results = {}
    async with connect(server) as client:
        thread = press_once_when_all_wait(fake_adb, 2)

        async def cat(name: str) -> None:  # `cat` is medium risk: each asks for a press
            args = {"command": "cat", "args": [f"/sdcard/{name}"]}
            results[name] = await client.call_tool("terminal_run", args)

        async with anyio.create_task_group() as tg:
            tg.start_soon(cat, "a.txt")
            tg.start_soon(cat, "b.txt")
        thread.join(5)
    answers = sorted(r.structured_content["decision"]["answer"] for r in results.values())
    assert answers == ["confirmed", "timeout"]
    sent = [c for c in fake_adb.device_commands() if c.startswith("cat ")]
    assert len(sent) == 1
    assert fake_adb.most_key_waiters == 1
