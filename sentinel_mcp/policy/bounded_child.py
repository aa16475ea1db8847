"""A child process the console runs work in (a rulebase check, a what-if replay), bounded from outside.

``spawn`` starts ``python -m module`` in a process group of its own (killed with any swipl it starts: a load's
rehearsal), with the rehearsal's memory, CPU and core bounds (``load_rehearsal.limit_child``) and its stdin a
pipe: at that pipe's end the child ends (the gateway gone, even killed). ``answer`` gives one such child its
one request and reads its answer within ``seconds`` of wall clock and ``MAX_ANSWER_BYTES``, and leaves no
child behind whatever happens. A child serves one request and ends: no state passes from one to the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys

from sentinel_mcp.core.errors import PolicyError
from sentinel_mcp.policy.load_rehearsal import limit_child

MAX_ANSWER_BYTES = 16 << 20
Child = asyncio.subprocess.Process


class ChildUnfinished(PolicyError):
    """A bounded child gave no answer: why, as a phrase after its subject ("the check did not finish ...")."""


async def spawn(module: str, seconds: float) -> Child:
    """``python -m module``, bounded for a request of ``seconds`` (memory, CPU), not yet sent anything."""
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", module,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,  # its own group: killed with any swipl it starts (a load's rehearsal)
        )
    except OSError as e:  # no process to be had (a process limit)
        raise ChildUnfinished(f"could not start ({e.strerror or e})") from None
    limit_child(proc.pid, seconds)  # the rehearsal's bounds: memory, CPU, no core
    return proc


def ended(proc: Child) -> bool:
    """Whether ``proc`` has ended or can no longer be sent its request, asked of the kernel now: the event
    loop hears of a child's end only on a later turn, and a child killed just before (the OOM killer, a
    signal) must not be handed a request. ``WNOWAIT``: it is left for the loop's own reaping."""
    if proc.returncode is not None or proc.stdin is None or proc.stdin.is_closing():
        return True
    if proc.stdout is None or proc.stdout.at_eof():
        return True
    try:
        if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
    except ChildProcessError:  # reaped already
        return True
    return _dying(proc.pid)


def _dying(pid: int) -> bool:
    """Its main thread ended (a zombie: killed, its other threads, SWI-Prolog's, still being torn down, which
    ``waitid`` reports only once they are gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):  # no /proc: what waitid said
        return False
    return state in (b"Z", b"X")


async def end(proc: Child) -> None:
    """Kill ``proc``'s process group when it still runs, and reap it."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
    if proc.stdin is not None:
        proc.stdin.close()  # a swipl its load left reads its own stdin's end (load_rehearsal)


async def _read_bounded(stream: asyncio.StreamReader) -> bytes:
    out = bytearray()
    while chunk := await stream.read(65536):
        out += chunk
        if len(out) > MAX_ANSWER_BYTES:
            raise ValueError("answer too long")
    return bytes(out)


async def _exchange(proc: Child, request: bytes) -> tuple[bytes, int]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(request)
    await proc.stdin.drain()  # within the deadline too: a child that reads nothing holds no caller
    out, code = await asyncio.gather(_read_bounded(proc.stdout), proc.wait())
    return out, code


async def answer(proc: Child, request: bytes, seconds: float) -> bytes:
    """``request`` sent to ``proc``, what it wrote back within ``seconds``; ``ChildUnfinished`` when it did
    not finish. Its stdin stays open while it runs; it is killed (its group) and reaped at the end."""
    try:
        out, code = await asyncio.wait_for(_exchange(proc, request), seconds)
    except asyncio.TimeoutError:
        raise ChildUnfinished(f"did not finish within {seconds:g} s") from None
    except (ValueError, OSError):
        raise ChildUnfinished("answered what could not be read") from None
    finally:
        await end(proc)
    if code != 0:
        why = f"signal {-code}" if code < 0 else f"exit {code}"
        raise ChildUnfinished(f"ended without an answer ({why}: out of memory or CPU?)")
    return out


async def run_child(module: str, request: bytes, seconds: float) -> bytes:
    """Run ``python -m module`` with ``request`` on its stdin, bounded (memory, CPU, ``seconds`` of wall
    clock, ``MAX_ANSWER_BYTES`` of answer), and return what it wrote; ``ChildUnfinished`` when it did not
    finish."""
    return await answer(await spawn(module, seconds), request, seconds)
