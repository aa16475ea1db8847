"""A rulebase check run off the engine that proves guards: in a child process with its own SWI-Prolog.

The checker walks every guard of a rulebase within one budget (check_budget.pl: 10M inferences, 10 s), but on
the gateway's engine that budget is time every principal's guard decisions wait: pyswip is not thread-safe,
one thread owns the engine, and a costly candidate checked live from the console held every decision of every
client for the whole budget, a few in a row stalled the gateway. So a check the console asks for runs in a
child (``check_child``) with a memory, CPU and wall-clock bound of its own, killed when it overruns, its stdin
a pipe held open while its answer is awaited so that it never outlives the gateway (as ``load_rehearsal``).
A check that could not finish is a problem of its own, an error (``unchecked_guard``: it refuses a draft),
never a check that found nothing. At most ``MAX_RUNNING`` checks run at once, one place a principal
(``check_places``): one more is refused at once (``ChecksBusy``), never queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from mcp.types import Tool

from sentinel_mcp.core.errors import PolicyError
from sentinel_mcp.policy.checker import CHECK_SECONDS, UNCHECKED_GUARD, UNFINISHED
from sentinel_mcp.policy.load_rehearsal import REHEARSAL_SECONDS, limit_child
from sentinel_mcp.policy.rulebase import Problem
from sentinel_mcp.policy.untrusted_rules import UntrustedRules

# start-up (an interpreter and SWI-Prolog, ~1 s), the load's own rehearsal and load, then the walks' budget
WALL_SECONDS = REHEARSAL_SECONDS + CHECK_SECONDS + 10
MAX_ANSWER_BYTES = 16 << 20


def untrusted_json(untrusted: UntrustedRules | None) -> dict[str, Any] | None:
    """The bounds of a client's candidate, as a child reads them back (``check_child.untrusted_of``)."""
    return None if untrusted is None else {
        "documents": [str(d) for d in untrusted.documents], "inference_limit": untrusted.inference_limit,
        "homes": {k: str(v) for k, v in untrusted.homes.items()},
    }


def _request(files: list[Path], catalog: list[Tool] | None, untrusted: UntrustedRules | None) -> bytes:
    bounds = untrusted_json(untrusted)
    tools = None if catalog is None else [t.model_dump(mode="json", by_alias=True) for t in catalog]
    request = {"files": [str(f) for f in files], "catalog": tools, "untrusted": bounds}
    return json.dumps(request).encode() + b"\n"


async def _read_bounded(stream: asyncio.StreamReader) -> bytes:
    out = bytearray()
    while chunk := await stream.read(65536):
        out += chunk
        if len(out) > MAX_ANSWER_BYTES:
            raise ValueError("answer too long")
    return bytes(out)


def unfinished(about: Path | str, why: str) -> Problem:
    """The problem a check that could not finish is: an error, and a draft's refusal (``unchecked_guard``)."""
    return Problem(
        severity="error", file=str(about), line=0, code=UNCHECKED_GUARD,
        message=f"{UNFINISHED} this rulebase: {why}; nothing about it is known to be fine",
    )


class ChildUnfinished(PolicyError):
    """A bounded child gave no answer: why, as a phrase after its subject ("the check did not finish ...")."""


async def run_child(module: str, request: bytes, seconds: float) -> bytes:
    """Run ``python -m module`` with ``request`` on its stdin, bounded (memory, CPU, ``seconds`` of wall
    clock, ``MAX_ANSWER_BYTES`` of answer), and return what it wrote; ``ChildUnfinished`` when it did not
    finish. Its stdin stays open while it runs: at its end the child ends (the gateway gone, even killed)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", module,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,  # its own group: killed with any swipl it starts (a load's rehearsal)
        )
    except OSError as e:  # no process to be had (a process limit)
        raise ChildUnfinished(f"could not start ({e.strerror or e})") from None
    limit_child(proc.pid, seconds)  # the rehearsal's bounds: memory, CPU, no core
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(request)
        await proc.stdin.drain()
        out, code = await asyncio.wait_for(asyncio.gather(_read_bounded(proc.stdout), proc.wait()), seconds)
    except asyncio.TimeoutError:
        raise ChildUnfinished(f"did not finish within {seconds:g} s") from None
    except (ValueError, OSError):
        raise ChildUnfinished("answered what could not be read") from None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
        proc.stdin.close()  # a swipl its load left reads its own stdin's end (load_rehearsal)
    if code != 0:
        why = f"signal {-code}" if code < 0 else f"exit {code}"
        raise ChildUnfinished(f"ended without an answer ({why}: out of memory or CPU?)")
    return out


async def check_isolated(
    files: list[Path], catalog: list[Tool] | None = None, untrusted: UntrustedRules | None = None, *,
    about: Path | None = None, seconds: float = WALL_SECONDS,
) -> list[Problem]:
    """``checker.check_paths`` of ``files``, run in a child process. ``about``: the file a check that could
    not finish is told of (the candidate; the first file otherwise). Call within ``check_slot``."""
    blame = about if about is not None else (files[0] if files else "")
    try:
        out = await run_child("sentinel_mcp.policy.check_child", _request(files, catalog, untrusted), seconds)
    except ChildUnfinished as e:
        return [unfinished(blame, f"the check {e}")]
    try:
        return [Problem.model_validate(p) for p in json.loads(out)["problems"]]
    except (ValueError, KeyError, TypeError):
        return [unfinished(blame, "the check's answer could not be read")]
