"""Waiting for a condition by a bounded count of looks (never a measured time: the machine is shared)."""

from __future__ import annotations

from collections.abc import Callable

import anyio


async def until(condition: Callable[[], object], looks: int = 6000, pause: float = 0.01) -> None:
    for _ in range(looks):
        if condition():
            return
        await anyio.sleep(pause)
    raise AssertionError("never happened")
