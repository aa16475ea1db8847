"""The running event loop, without a system call per look-up.

CPython 3.11's ``asyncio.get_running_loop`` calls ``getpid()`` on every call: its check that a child forked
from a thread running a loop does not take its parent's loop (3.12 keeps the loop in the thread state and
drops the check). The hot path asked ~7 times per guarded call (issue 21: 7.7 ``getpid`` per call under
strace). ``running_loop`` keeps the loop it found and hands it back while that loop runs on the calling
thread (its ``_thread_id``: exactly one loop runs on a thread at a time), so asking again reads attributes
and calls nothing. Fork safety is kept by ``os.register_at_fork``: a child starts a new
generation, and a loop kept by its parent is never handed back there (``asyncio`` then says, as it does,
that no loop runs).
"""

from __future__ import annotations

import asyncio
import os
import threading

_generation = 0  # moved on in a forked child: what the parent kept is not the child's


class _Kept(threading.local):
    """This thread's loop as last found running (a ``BaseEventLoop``), with its thread's id and the
    generation then: attributes only, so the look-up that hands it back calls nothing."""

    loop: asyncio.BaseEventLoop | None = None
    ident: int | None = None
    generation = -1


_here = _Kept()


def _forked() -> None:
    global _generation
    _generation += 1


os.register_at_fork(after_in_child=_forked)


def running_loop() -> asyncio.AbstractEventLoop:
    """``asyncio.get_running_loop()``: the loop running on this thread, or RuntimeError when none does."""
    here = _here
    kept = here.loop
    # ``_thread_id``: set by ``BaseEventLoop.run_forever`` to the thread it runs on, None once it stops
    if kept is not None and kept._thread_id == here.ident and here.generation == _generation:  # type: ignore[attr-defined]
        return kept
    loop = asyncio.get_running_loop()
    if isinstance(loop, asyncio.BaseEventLoop):  # another implementation: asked for every time
        here.loop, here.ident, here.generation = loop, threading.get_ident(), _generation
    return loop
