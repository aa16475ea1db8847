"""Telling clients of a change (a resource's update, a changed catalog): each client side by side, and each
within ``NOTICE_SECONDS``. A client that has not taken a notice by then is not reading (its connection's
buffers are full): it is treated as one that went away, so it holds up neither the other clients nor whoever
announced the change (an upstream's supervisor, on a reconnect).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import anyio

NOTICE_SECONDS = 5.0
T = TypeVar("T")


async def told(send: Callable[[], Awaitable[Any]]) -> str | None:
    """None when the client took the notice in time; else why not."""
    with anyio.move_on_after(NOTICE_SECONDS):
        try:
            await send()
            return None
        except Exception as e:  # noqa: BLE001 - a client that went away
            return f"gone ({type(e).__name__})"
    return f"took nothing within {NOTICE_SECONDS:.0f}s"


async def tell_each(clients: list[T], tell: Callable[[T], Coroutine[Any, Any, None]]) -> None:
    """``tell(client)`` for every client at once (one alone: no task group)."""
    if len(clients) == 1:
        await tell(clients[0])
    elif clients:
        async with anyio.create_task_group() as tg:
            for client in clients:
                tg.start_soon(tell, client)
