"""How long a principal counts as watching after its last console page closed (``inbox.WATCH_GRACE``) is a
deployment cap, ``SENTINEL_CAP_WATCH_GRACE_SECONDS``: 10 s unless set (only a positive integer moves a cap,
tests/core/test_deployment_caps.py). A real Inbox, in a fresh interpreter for the lowered grace, as a gateway
reads it at start."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from sentinel_mcp.console import inbox
from sentinel_mcp.console.inbox import Inbox

LOWERED = """
import asyncio, time
from sentinel_mcp.console.inbox import WATCH_GRACE, Inbox

async def main():
    box = Inbox(hold_seconds=30)
    box.unwatch("alice", box.watch("alice"))
    held = box.should_hold("alice")
    time.sleep(WATCH_GRACE + 0.2)
    print(WATCH_GRACE, held, box.should_hold("alice"))

asyncio.run(main())
"""


async def test_a_closed_page_counts_as_watching_for_the_grace_in_force():
    if "SENTINEL_CAP_WATCH_GRACE_SECONDS" not in os.environ:
        assert inbox.WATCH_GRACE == 10.0
    box = Inbox(hold_seconds=30)
    queue = box.watch("alice")
    assert queue is not None and box.should_hold("alice")
    box.unwatch("alice", queue)
    assert box.should_hold("alice")  # within the grace: a page that reloads leaves its call held
    env = {**os.environ, "SENTINEL_CAP_WATCH_GRACE_SECONDS": "1"}
    out = await asyncio.to_thread(subprocess.run, [sys.executable, "-c", LOWERED], capture_output=True,
                                  text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1.0", "True", "False"], out.stdout
