"""A rulebase's load is rehearsed in a child SWI-Prolog before the gateway's own engine reads a byte of it.

Two things in a rulebase file can take down the process that loads it, and no bound checked beforehand is
sure to see them: a term nested deep enough crashes SWI-Prolog's reader (SIGSEGV: the reader recurses on the
C stack), and ``clause_bounds.py`` finds it only as far as its lexer agrees with SWI's (radix numbers,
character codes and quasi-quotations are where a second lexer drifts); and a clause the loader calls could
run without end. So the child loads the same files with the same code (``prolog/load_rehearsal.pl``: load,
finish, describe) on a thread with a quarter of the C stack the engine's thread has, within
``REHEARSAL_SECONDS``, and its problems are the load's: SWI-Prolog's own threads know their C stack, so
there a term too deep is an error with its file ("C-stack limit exceeded"), where the engine's thread (made
by Python, its stack unknown to SWI) would crash. A file with errors is refused with the child's problems
and never reaches the engine; a child that dies by a signal, or does not finish in time, is a
``RehearsalFailed``: ``check`` says so, a gateway starting with it denies every call, and a hot reload
keeps the policy in force and reports it. A clean rehearsal costs about 0.1 s (one ``swipl`` start and
load; benchmarks/rulebase_load.py). The child loads within the engine's own inference limit
(``load_limit.LOAD_INFERENCE_LIMIT``), and a memory and a CPU bound besides the deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import resource
import signal
import sys
import threading
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any

from sentinel_mcp.core.errors import PolicyError
from sentinel_mcp.core.trusted_code import ProgramRefused, find_program
from sentinel_mcp.policy.core_qlf import core_arguments, prolog_refused
from sentinel_mcp.policy.load_limit import LOAD_INFERENCE_LIMIT
from sentinel_mcp.policy.rulebase_includes import loader_files

SCRIPT = Path(__file__).with_name("prolog") / "load_rehearsal.pl"
REHEARSAL_SECONDS = 30.0
READ_GRACE = 1.0  # seconds to read a verdict past its deadline (the child's own bounds are unchanged)
MIN_C_STACK = 256 * 1024
UNLIMITED_STACK = 8 * 1024 * 1024  # what a thread gets when RLIMIT_STACK is unlimited (glibc)
MEMORY_BYTES = 4 << 30  # the child's address space (a 32 MB file of facts needs a few hundred MB)
OUTPUT_BYTES = 4000  # of the child's stderr, kept for the message
MAX_CONCURRENT = 2  # children at once (this machine's cores; a load takes ~0.1 s of one)
MAX_REMEMBERED = 64  # file sets whose rehearsal is remembered, by their names and contents
log = logging.getLogger(__name__)
_done: OrderedDict[str, dict[str, Any]] = OrderedDict()
# rehearsals started by ``begin``, by key: (files, child, its verdict to come); taken once by ``rehearse``
_early: dict[str, tuple[tuple[Path, ...], asyncio.subprocess.Process, asyncio.Future[dict[str, Any]]]] = {}
_deadlines: dict[int, float] = {}  # a child's pid -> the loop time its verdict is due by
_cores: dict[int, list[str]] = {}  # a child's pid -> the core's files it was given (core_qlf.prolog_refused)
_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


class RehearsalFailed(PolicyError):
    """The child could not load the files: ``reason`` says how (a crash, no end, no SWI-Prolog)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def child_c_stack() -> int:
    """A quarter of the C stack the engine's thread has: what loads there loads in the gateway too."""
    size = threading.stack_size()
    if not size:
        soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
        size = UNLIMITED_STACK if soft in (resource.RLIM_INFINITY, -1) else soft
    return max(MIN_C_STACK, size // 4)


def limit_child(pid: int, seconds: float) -> None:
    """The child's memory and CPU, bounded from outside (no preexec_fn in a process with threads): a file
    that makes the load grow without end costs the child its memory limit, not the machine's."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, ValueError):
        resource.prlimit(pid, resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
        cpu = int(seconds) + 5
        resource.prlimit(pid, resource.RLIMIT_CPU, (cpu, cpu))
        resource.prlimit(pid, resource.RLIMIT_CORE, (0, 0))


async def rehearse(
    files: list[Path], seconds: float = REHEARSAL_SECONDS, *, key: str | None = None
) -> dict[str, Any]:
    """The load's problems (``errors``, ``warnings``) as a child SWI-Prolog found them loading ``files``;
    raises ``RehearsalFailed`` when it could not load them to the end. ``key``: the files' names and contents
    digested (``rulebase_digest.content_digest``): a set rehearsed once is not rehearsed again (a policy page
    shown again, a replica adopting a version), and a rehearsal ``begin`` started early for the same key is
    taken.
    At most ``MAX_CONCURRENT`` children run at once, whoever asks (a flood of what-ifs waits its turn)."""
    known = _done.get(key) if key is not None else None
    if known is not None:
        _done.move_to_end(key)  # type: ignore[arg-type]
        return copy.deepcopy(known)
    found = await _early_verdict(files, key) if key is not None else None
    if found is None:
        slots = _slots.get(asyncio.get_running_loop())
        if slots is None:
            slots = _slots[asyncio.get_running_loop()] = asyncio.Semaphore(MAX_CONCURRENT)
        async with slots:
            found = await _verdict(await _spawn(files, seconds), seconds)
    if key is not None:
        _done[key] = copy.deepcopy(found)
        while len(_done) > MAX_REMEMBERED:
            _done.popitem(last=False)
    return found


async def begin(files: list[Path], key: str, seconds: float = REHEARSAL_SECONDS) -> None:
    """Start the rehearsal of ``files`` (digested as ``key`` just before) now, at the start of ``serve``, so
    that it runs beside the gateway's imports; the first ``rehearse`` of the same key takes its verdict (issue
    21). Nothing is kept but the verdict: the load digests the files again, and a verdict is taken only if the
    files still have the same digest once the child has ended (what it read is what the load reads). A child
    that cannot be started is left to the load's own rehearsal, which reports it."""
    if key in _early or key in _done:
        return
    try:
        proc = await _spawn(files, seconds)
    except RehearsalFailed:
        return
    _early[key] = (tuple(files), proc, asyncio.ensure_future(_verdict(proc, seconds, READ_GRACE)))


async def _early_verdict(files: list[Path], key: str) -> dict[str, Any] | None:
    early = _early.pop(key, None)
    if early is None:
        return None
    named, proc, verdict = early
    if named != tuple(files):
        await _stop(proc, verdict)
        return None
    found = await verdict  # its RehearsalFailed is the load's, as a rehearsal started now would raise it
    from sentinel_mcp.policy.rulebase import content_digest  # rulebase imports this module
    from sentinel_mcp.policy.rulebase_includes import included_files

    # the files and what they include, as the key digests them (rulebase_digest.set_digest); changed while
    # the child read them: again
    if await asyncio.to_thread(lambda: content_digest(included_files(files))) != key:
        return None
    return found


async def discard_early() -> None:
    """Kill and reap the early rehearsals no load took (start-up over or aborted: no child outlives it)."""
    entries = list(_early.values())
    _early.clear()
    for _, proc, verdict in entries:
        await _stop(proc, verdict)


async def _stop(proc: asyncio.subprocess.Process, verdict: asyncio.Future[dict[str, Any]]) -> None:
    verdict.cancel()
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    with contextlib.suppress(Exception):
        await asyncio.shield(proc.wait())
    with contextlib.suppress(BaseException):
        await verdict


async def _spawn(files: list[Path], seconds: float) -> asyncio.subprocess.Process:
    try:  # never one another account could change (core/trusted_code.py)
        swipl = find_program("swipl")
    except ProgramRefused as e:
        raise RehearsalFailed(str(e)) from None
    if swipl is None:
        raise RehearsalFailed("SWI-Prolog's swipl command is not on PATH, so the rulebase cannot be checked")
    # stdin a pipe held open until the verdict is read: the child ends when it reads its end (this process
    # gone, even by SIGKILL), so no rehearsal outlives the gateway that started it
    core = core_arguments()
    proc = await asyncio.create_subprocess_exec(
        swipl, "-f", "none", "-q", "--no-tty", str(SCRIPT), "--", *core, str(child_c_stack()),
        str(LOAD_INFERENCE_LIMIT), json.dumps(loader_files([str(f) for f in files])),  # and their includes
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    limit_child(proc.pid, seconds)
    _deadlines[proc.pid] = asyncio.get_running_loop().time() + seconds  # from the spawn, however late read
    _cores[proc.pid] = core
    log.debug("start-up stage: rulebase rehearsal started (pid %d)", proc.pid)
    return proc


async def _verdict(proc: asyncio.subprocess.Process, seconds: float, grace: float = 0.0) -> dict[str, Any]:
    assert proc.stdout is not None and proc.stderr is not None and proc.stdin is not None
    # the deadline runs from the spawn; an early verdict read late (the event loop held by the imports) still
    # has ``grace`` to be read, so a child that ended in time is never taken for one that did not
    left = _deadlines.pop(proc.pid, 0.0) - asyncio.get_running_loop().time()
    core = _cores.pop(proc.pid, ["0"])
    try:
        out, err, _ = await asyncio.wait_for(
            asyncio.gather(proc.stdout.read(), proc.stderr.read(), proc.wait()), max(grace, left)
        )
    except asyncio.TimeoutError:
        raise RehearsalFailed(
            f"loading it did not finish within {seconds:g} s (a clause that runs without end when loaded?)"
        ) from None
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        proc.stdin.close()
    code = proc.returncode or 0
    log.debug("start-up stage: rulebase rehearsal ended (exit %d)", code)
    if code == 0:
        try:
            found = json.loads(out)
            log.debug("rehearsal's core loaded from %s", found["core"])
            prolog_refused(core, found["core"])  # a .qlf refused on the Prolog side, counted (core_qlf.py)
            return {"errors": list(found["errors"]), "warnings": list(found["warnings"])}
        except (ValueError, KeyError, TypeError):
            raise RehearsalFailed("the trial run's report could not be read") from None
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        raise RehearsalFailed(f"reading it crashed SWI-Prolog ({name}): a term too deep for its reader?")
    text = err[-OUTPUT_BYTES:].decode("utf-8", "replace").strip()
    raise RehearsalFailed(f"loading it failed in a trial run (exit {code}): {text[-500:]}")
