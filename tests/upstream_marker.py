"""The marker file a test upstream appends a line to as it does a write (its answer comes late or never).

A call the gateway timed out, or one its caller gave up on, may still be on its way to the upstream's process
on a loaded machine: what the upstream did is read once it has done it, and a caller gives up once the
upstream has begun, never after a fixed delay (CI: a caller giving up after 1.5 s had not reached it yet, and
the upstream of a call timed out after 1 s had not read it yet). Waits are bounded by a count of turns: an
upstream that never writes still fails the test, within its timeout marker."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

TURNS = 6000  # of 10 ms at least: a minute on a quiet machine, more on a loaded one


def marked(marker: Path) -> list[str]:
    """The marker's lines now (none before the upstream wrote any)."""
    return marker.read_text().splitlines() if marker.exists() else []


async def once_marked(marker: Path) -> list[str]:
    """The marker's lines once it has any (none if it never had within the bound)."""
    for _ in range(TURNS):
        if lines := marked(marker):
            return lines
        await anyio.sleep(0.01)
    return marked(marker)


async def give_up_once_marked(marker: Path, call: Callable[[], Awaitable[object]]) -> None:
    """Run ``call`` and cancel it once the upstream has written its line (the caller gave up on a call that
    reached the upstream and is still running there)."""
    async with anyio.create_task_group() as tg:

        async def give_up() -> None:
            await once_marked(marker)
            tg.cancel_scope.cancel()

        tg.start_soon(give_up)
        await call()
        tg.cancel_scope.cancel()  # answered before it was given up on: the test's assertions judge that
