"""An async context manager held open for a module-scoped fixture, entered and left in one task of its own.

pytest-asyncio runs a fixture's setup and teardown in different tasks, and anyio's cancel scopes (a running
gateway's task groups) must be left in the task that entered them: the fixture ``yield``s from ``held``."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncContextManager, AsyncIterator


async def held(manager: AsyncContextManager[Any]) -> AsyncIterator[Any]:
    """What ``manager`` gives, open until the generator is resumed; its error on entering is raised here."""
    box: list[Any] = []
    ready, done = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        async with manager as value:
            box.append(value)
            ready.set()
            await done.wait()

    task = asyncio.create_task(hold())
    waiting = asyncio.create_task(ready.wait())
    await asyncio.wait([task, waiting], return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    if task.done():
        task.result()
    try:
        yield box[0]
    finally:
        done.set()
        await task
