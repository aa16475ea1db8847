"""``anyio.Event()`` and ``anyio.CancelScope()`` made without asking, on every call, which async library runs.

anyio's constructors look the running library up (``get_async_backend``: sniffio, a dict, a class's
``create_event`` or ``create_cancel_scope``) for every object; on CPython 3.11 that look-up asks
``asyncio.get_running_loop``, a ``getpid`` system call each time (``core/running_loop.py``). The gateway runs
on asyncio only, so the class it gave once is enough. Requests on the hot path make one or two events (a
dispatch context's ``cancel_requested``, a connection's ``initialized``) and a cancel scope (issue 21).
"""

from __future__ import annotations

import anyio

_EVENT: list[type] = []  # anyio's Event class of the running backend
_SCOPE: list[type] = []  # its CancelScope class


def new_event() -> anyio.Event:
    """A fresh ``anyio.Event()`` (the same class), on the running event loop's backend."""
    if not _EVENT:
        event = anyio.Event()
        if not _backends(event):
            return event  # no loop runs (anyio's adapter, which binds on first use): nothing to keep
        _EVENT.append(type(event))
    return _EVENT[0]()  # type: ignore[no-any-return]


def new_cancel_scope() -> anyio.CancelScope:
    """A fresh ``anyio.CancelScope()`` (the same class, no deadline, not shielded), on the running loop's
    backend."""
    if not _SCOPE:
        scope = anyio.CancelScope()
        if not _backends(scope):
            return scope
        _SCOPE.append(type(scope))
    return _SCOPE[0]()  # type: ignore[no-any-return]


def _backends(made: object) -> bool:
    """Whether ``made`` is a backend's own class (kept), not an adapter made outside a running loop."""
    return type(made).__module__.startswith("anyio._backends.")
