"""``anyio.Event()`` made without asking, on every call, which async library runs.

anyio's constructor looks the running library up (``get_async_backend``: sniffio, a dict, a class's
``create_event``) for every event; the gateway runs on asyncio only, so the class it gave once is enough.
Requests on the hot path make one or two (a dispatch context's ``cancel_requested``; issue 21).
"""

from __future__ import annotations

import asyncio

import anyio

_EVENT: list[type] = []  # anyio's Event class of the running backend


def new_event() -> anyio.Event:
    """A fresh ``anyio.Event()`` (the same class), on the running event loop's backend."""
    if not _EVENT:
        event = anyio.Event()
        if asyncio._get_running_loop() is None:
            # outside a loop anyio gives an adapter that picks its backend later: not the class to keep
            return event
        _EVENT.append(type(event))
    return _EVENT[0]()  # type: ignore[no-any-return]
