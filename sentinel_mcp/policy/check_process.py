"""A rulebase check run off the engine that proves guards: in a child process with its own SWI-Prolog.

The checker walks every guard of a rulebase within one budget (check_budget.pl: 10M inferences, 10 s), but on
the gateway's engine that budget is time every principal's guard decisions wait: pyswip is not thread-safe,
one thread owns the engine, and a costly candidate checked live from the console held every decision of every
client for the whole budget, a few in a row stalled the gateway. So a check the console asks for runs in a
child (``check_child``) with a memory, CPU and wall-clock bound of its own, killed when it overruns, its stdin
a pipe held open while its answer is awaited so that it never outlives the gateway (as ``load_rehearsal``).
A check that could not finish is a problem of its own, an error (``unchecked_guard``: it refuses a draft),
never a check that found nothing. While the console runs, a warm spare child (``spare_child``) is taken
when there is one: the check then does not wait for a child's start-up. At most ``MAX_RUNNING`` checks run
at once, one place a principal (``check_places``): one more is refused at once (``ChecksBusy``), never
queued.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp_types import Tool

from sentinel_mcp.policy import spare_child
from sentinel_mcp.policy.bounded_child import ChildUnfinished, answer, spawn
from sentinel_mcp.policy.checker import CHECK_SECONDS, UNCHECKED_GUARD, UNFINISHED
from sentinel_mcp.policy.load_rehearsal import REHEARSAL_SECONDS
from sentinel_mcp.policy.rulebase import Problem
from sentinel_mcp.policy.untrusted_rules import UntrustedRules

# start-up (an interpreter and SWI-Prolog, ~1 s), the load's own rehearsal and load, then the walks' budget
WALL_SECONDS = REHEARSAL_SECONDS + CHECK_SECONDS + 10
CHILD = "sentinel_mcp.policy.check_child"


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


def unfinished(about: Path | str, why: str) -> Problem:
    """The problem a check that could not finish is: an error, and a draft's refusal (``unchecked_guard``)."""
    return Problem(
        severity="error", file=str(about), line=0, code=UNCHECKED_GUARD,
        message=f"{UNFINISHED} this rulebase: {why}; nothing about it is known to be fine",
    )


async def check_isolated(
    files: list[Path], catalog: list[Tool] | None = None, untrusted: UntrustedRules | None = None, *,
    about: Path | None = None, seconds: float = WALL_SECONDS,
) -> list[Problem]:
    """``checker.check_paths`` of ``files``, run in a child process. ``about``: the file a check that could
    not finish is told of (the candidate; the first file otherwise). Call within ``check_slot``."""
    blame = about if about is not None else (files[0] if files else "")
    request = _request(files, catalog, untrusted)
    try:
        # the warm spare when there is one (made for this bound), else a child started now
        child = await spare_child.take(CHILD, seconds) or await spawn(CHILD, seconds)
        out = await answer(child, request, seconds)
    except ChildUnfinished as e:
        return [unfinished(blame, f"the check {e}")]
    finally:
        spare_child.prepare()  # the next check's (when spares are on: the console runs)
    try:
        return [Problem.model_validate(p) for p in json.loads(out)["problems"]]
    except (ValueError, KeyError, TypeError):
        return [unfinished(blame, "the check's answer could not be read")]
