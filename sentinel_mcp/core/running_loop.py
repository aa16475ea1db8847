"""The running event loop, without a system call per look-up.

CPython 3.11's ``asyncio.get_running_loop`` calls ``getpid()`` on every call: its check that a child forked
from a thread running a loop does not take its parent's loop (3.12 keeps the loop in the thread state and
drops the check). The hot path asked ~7 times per guarded call (issue 21: 7.7 ``getpid`` per call under
strace). ``running_loop`` keeps the loop it found and hands it back while that loop runs on the calling
thread (its ``_thread_id``: exactly one loop runs on a thread at a time), so asking again costs an attribute
read and ``threading.get_ident``. Fork safety is kept by ``os.register_at_fork``: a child starts a new
generation, and a loop kept by its parent is never handed back there (``asyncio`` then says, as it does,
that no loop runs).
"""

from __future__ import annotations

import asyncio
import os
import threading

_generation = 0  # moved on in a forked child: what the parent kept is not the child's
_kept: tuple[asyncio.AbstractEventLoop, int] | None = None  # (a loop found running, the generation then)


def _forked() -> None:
    global _generation, _kept
    _generation += 1
    _kept = None


os.register_at_fork(after_in_child=_forked)


def running_loop() -> asyncio.AbstractEventLoop:
    """``asyncio.get_running_loop()``: the loop running on this thread, or RuntimeError when none does."""
    global _kept
    kept = _kept
    if kept is not None:
        loop, generation = kept
        # ``_thread_id``: set by ``BaseEventLoop.run_forever`` on the thread it runs on, None once it stops;
        # a loop without it (another implementation) is always asked for again
        if generation == _generation and getattr(loop, "_thread_id", None) == threading.get_ident():
            return loop
    loop = asyncio.get_running_loop()
    _kept = (loop, _generation)
    return loop
