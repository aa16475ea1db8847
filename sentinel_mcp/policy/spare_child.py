"""At most one warm spare check child, so that a console check does not wait for a child's start-up.

A check child spends about a second before it does any work (an interpreter, the checker's modules, the MCP
types among them, and SWI-Prolog started: ``benchmarks/check_child_start.py``), and the owner's live check
waited for all of it. So while the console runs (``enable`` at its start, ``stop`` at the gateway's end) one
child is started ahead (``prepare``: when the policy page is shown and after each check), bounded as any check
child is (``bounded_child.spawn``: its own process group, memory and CPU, its stdin a pipe, so it never
outlives the gateway), and warms up to where it waits for its request. The next check ``take``s it and sends
its request; its wall-clock deadline starts then. A child serves one request and ends, so nothing one
principal's check left in it is seen by the next: a spare has served nobody. Never more than one spare.
"""

from __future__ import annotations

import asyncio

from sentinel_mcp.policy.bounded_child import Child, ChildUnfinished, end, ended, spawn

_loop: asyncio.AbstractEventLoop | None = None  # the console's event loop while it runs; None: no spares
_spare: Child | None = None
_starting: asyncio.Task[None] | None = None
_module, _seconds = "", 0.0  # what the spare runs, and the request bound it was made for


def enable(module: str, seconds: float) -> None:
    """Spares of ``python -m module``, bounded for a request of ``seconds``, from now on this event loop."""
    global _loop, _module, _seconds
    _loop, _module, _seconds = asyncio.get_running_loop(), module, seconds


async def stop() -> None:
    """No spares from now on; the one there is killed with its process group."""
    global _loop, _spare, _starting
    _loop = None
    starting, _starting = _starting, None
    if starting is not None:
        await asyncio.gather(starting, return_exceptions=True)
    spare, _spare = _spare, None
    if spare is not None:
        await end(spare)


def _here() -> bool:
    try:
        return _loop is not None and asyncio.get_running_loop() is _loop
    except RuntimeError:
        return False


def prepare() -> None:
    """Start the spare when spares are on and there is none (nor one starting)."""
    global _starting
    if _here() and _spare is None and _starting is None:
        _starting = asyncio.get_running_loop().create_task(_start())


async def _start() -> None:
    global _spare, _starting
    try:
        proc = await spawn(_module, _seconds)
    except ChildUnfinished:  # no process to be had now: the next check starts its own
        return
    finally:
        _starting = None
    if _here() and _spare is None:
        _spare = proc
    else:  # stopped meanwhile
        await end(proc)


async def take(module: str, seconds: float) -> Child | None:
    """The spare, for a request of ``module`` within ``seconds`` (the bound it was made for), when there is
    one still alive and waiting (``ended``: never a dead one); it is the caller's from now on (never handed
    out twice)."""
    global _spare
    spare = _spare
    if spare is None or not _here() or (module, seconds) != (_module, _seconds):
        return None
    _spare = None
    if ended(spare):  # killed (its CPU, the OOM killer, a signal), its engine failed: one started afresh
        await end(spare)
        return None
    return spare


def spare_pid() -> int | None:
    """The spare's process id (for tests and the benchmark)."""
    return None if _spare is None else _spare.pid
