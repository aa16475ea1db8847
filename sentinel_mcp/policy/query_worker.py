"""Client goals run in separate swipl processes, never in the engine that decides tool calls.

A goal typed by a client (``sentinel_query``, ``sentinel-mcp query``) is checked against an allow list and
proved in a query worker: a ``swipl`` process with its own copy of the rulebase and of the session's facts,
a stack limit, an address-space limit and a wall-clock budget. A goal that loops, builds a huge term, atom
or integer, or exhausts memory can only hurt its worker, which is killed and replaced; the engine thread
that proves guards never sees client text, so decisions stay on time and shared engine state (operators,
flags, globals, code) is out of a client's reach.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Hashable

from sentinel_mcp.core import process_clock
from sentinel_mcp.policy.prolog_text import from_prolog_json, json_text, to_prolog_chars
from sentinel_mcp.policy.rulebase_includes import loader_files
from sentinel_mcp.policy.query_turns import QueryTurns, TooManyWaiting
from sentinel_mcp.core.errors import PolicyError
from sentinel_mcp.policy.core_qlf import core_arguments, prolog_refused
from sentinel_mcp.core.trusted_code import ProgramRefused, find_program

log = logging.getLogger(__name__)

WORKER = Path(__file__).with_name("prolog") / "query_worker.pl"
MAX_GOAL_CHARS = 4000
MAX_ANSWER_BYTES = 4 << 20


class QueryWorkerError(PolicyError):
    """The worker could not answer (it overran its budget and was replaced, or could not start)."""


@dataclass(frozen=True)
class QueryBudget:
    """What one client goal may spend."""

    seconds: float = 2.0
    inferences: int = 2_000_000
    stack_bytes: int = 256 << 20  # SWI-Prolog's stack limit: terms, big integers, strings
    address_space_bytes: int = 2 << 30  # the whole process, atoms included
    max_solutions: int = 20


def _limit_child(address_space: int) -> None:  # runs in the child before exec
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.setsid()
    if sys.platform.startswith("linux"):  # die with the gateway
        import ctypes

        with contextlib.suppress(Exception):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@dataclass
class _Worker:
    proc: asyncio.subprocess.Process
    core: list[str]  # the core's files it was given (core_qlf.core_arguments)
    modules: dict[str, str] = field(default_factory=dict)  # rulebase module -> version loaded
    sessions: dict[str, Hashable] = field(default_factory=dict)  # session module -> generation sent


class QueryWorker:
    """One swipl query process at a time, started on first use and replaced when it overruns. Principals
    take turns at it (``query_turns.py``): round robin, at most ``per_principal`` goals of one waiting."""

    def __init__(
        self, budget: QueryBudget | None = None, max_sessions: int = 64, per_principal: int = 8
    ) -> None:
        self.budget = budget or QueryBudget()
        self.max_sessions = max_sessions
        self._worker: _Worker | None = None
        self._turns = QueryTurns(per_principal)
        self.restarts = 0

    @property
    def per_principal(self) -> int:
        return self._turns.per_principal

    async def _start(self) -> _Worker:
        try:  # the guard's own engine: never one another account could change (core/trusted_code.py)
            exe = find_program("swipl")
        except ProgramRefused as e:
            raise QueryWorkerError(str(e)) from None
        if exe is None:
            raise QueryWorkerError("swipl is not installed (apt-get install swi-prolog-nox)")
        stack_mb = max(16, self.budget.stack_bytes >> 20)
        core = core_arguments()
        proc = await asyncio.create_subprocess_exec(
            # -f none: never the user's init file (as the engine and the rehearsal: what they load, it loads)
            exe, "-f", "none", f"--stack-limit={stack_mb}m", "-q", "-g", "query_worker:main", "-t", "halt",
            str(WORKER),
            "--", *core,  # the core's files (core_qlf.py)
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            limit=MAX_ANSWER_BYTES, preexec_fn=lambda: _limit_child(self.budget.address_space_bytes))
        return _Worker(proc, core)

    async def _kill(self) -> None:
        w, self._worker = self._worker, None
        if w is None:
            return
        with contextlib.suppress(ProcessLookupError):
            w.proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(w.proc.wait(), 5)

    async def close(self) -> None:
        async with self._turns.turn(_CLOSING):
            await self._kill()

    async def _request(self, w: _Worker, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        assert w.proc.stdin is not None and w.proc.stdout is not None
        w.proc.stdin.write(to_prolog_chars(json_text(request)).encode() + b"\n")  # lone surrogates mapped
        try:
            await asyncio.wait_for(w.proc.stdin.drain(), timeout)
            line = await asyncio.wait_for(w.proc.stdout.readline(), timeout)
        except asyncio.TimeoutError:
            raise _Overrun("the query ran longer than its time budget (its worker was replaced)") from None
        except (asyncio.LimitOverrunError, ValueError):
            raise _Overrun("the query's answer was larger than its memory budget") from None
        except ConnectionError:
            raise _Overrun("the query worker stopped (the query ran out of memory)") from None
        if not line:
            raise _Overrun("the query worker stopped (it ran out of memory)")
        return from_prolog_json(line.decode("utf-8", "replace"))

    async def query(self, *, rb_module: str, rb_version: str, rb_files: list[str], session_module: str,
                    generation: Hashable, dump_session: Any, goal: str, now: float | None = None,
                    inference_limit: int | None = None, principal: str = "") -> dict[str, Any]:
        """Prove a client goal; ``dump_session()`` gives the session's facts (only called when the worker's
        copy is older than ``generation``). Returns the engine's query answer (status, solutions, needs).
        ``principal``: whose turn it takes (its goals wait in a queue of their own). ``now``: the time the
        facts' expiries are compared with, by default the process clock's when the turn comes."""
        if len(goal) > MAX_GOAL_CHARS:
            return {"status": "refused", "message": f"the query is too long ({len(goal)} characters > "
                                                    f"{MAX_GOAL_CHARS})", "needs": [], "unmet": []}
        try:
            async with self._turns.turn(principal):
                return await self._query(rb_module, rb_version, rb_files, session_module, generation,
                                         dump_session, now, goal, inference_limit)
        except TooManyWaiting:
            n = self._turns.per_principal
            return {"status": "refused", "message": f"too many of this caller's queries are waiting (at most "
                                                    f"{n}); ask again when one is answered",
                    "needs": [], "unmet": []}

    async def _query(self, rb_module: str, rb_version: str, rb_files: list[str], session_module: str,
                     generation: Hashable, dump_session: Any, now: float | None, goal: str,
                     inference_limit: int | None) -> dict[str, Any]:
        b = self.budget
        try:
            w = self._worker
            if w is None or w.proc.returncode is not None:
                if w is not None:
                    self.restarts += 1
                w = self._worker = await self._start()
                # how it loaded its core (kept first: a ping that fails kills it as any request's would): a
                # .qlf refused on the Prolog side is counted with the plan's own refusals (core_qlf.py)
                prolog_refused(w.core, (await self._request(w, {"op": "ping"}, 30.0)).get("core"))
            setup = 30.0
            if w.modules.get(rb_module) != rb_version:
                out = await self._request(
                    w, {"op": "load", "module": rb_module,
                        "files": await asyncio.to_thread(loader_files, rb_files)}, setup
                )
                if not out.get("ok") or out.get("errors"):
                    raise QueryWorkerError(
                        "the query worker could not load the rulebase: "
                        + "; ".join(e.get("message", "") for e in out.get("errors", []))
                    )
                for old in [m for m in w.modules if m != rb_module]:  # one rulebase at a time
                    await self._request(w, {"op": "unload", "module": old}, setup)
                    del w.modules[old]
                w.modules[rb_module] = rb_version
            if w.sessions.get(session_module) != generation:
                lines = await dump_session()
                while len(w.sessions) >= self.max_sessions and session_module not in w.sessions:
                    oldest = next(iter(w.sessions))
                    await self._request(w, {"op": "drop", "session": oldest}, setup)
                    del w.sessions[oldest]
                await self._request(
                    w, {"op": "session", "session": session_module, "lines": lines}, setup
                )
                w.sessions.pop(session_module, None)
                w.sessions[session_module] = generation
            # the worker enforces the budget itself; the extra second covers a goal stuck in one
            # foreign call (a huge atom being built) that no Prolog signal can interrupt
            return await self._request(
                w,
                {
                    "op": "query",
                    "rb": rb_module,
                    "session": session_module,
                    "now": process_clock.now() if now is None else now,
                    "goal": goal,
                    "max": b.max_solutions,
                    "limit": inference_limit or b.inferences,
                    "seconds": b.seconds,
                },
                b.seconds + 1.0,
            )
        except _Overrun as e:
            log.warning("query worker replaced: %s", e)
            await self._kill()
            self.restarts += 1
            return {
                "status": "time_limit" if "time" in str(e) else "memory_limit",
                "message": str(e),
                "needs": [],
                "unmet": [],
            }
        except (OSError, QueryWorkerError) as e:
            await self._kill()
            raise QueryWorkerError(str(e)) from None


class _Overrun(PolicyError):
    pass


_CLOSING = "\0closing"  # close's own turn (no principal's name holds a NUL)
