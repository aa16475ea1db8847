"""A what-if replay run off the engine that proves guards: in a child process with its own SWI-Prolog.

A replay decides up to ``replay.MAX_CALLS`` recorded calls twice, each decision within the budget in force,
but a builtin's own work (a sort of a long list, in a loop) is one inference: on the gateway's engine (one
thread owns it, pyswip is not thread-safe) every such decision was time every client's guard decision waited
for, long enough for theirs to time out. So the console's replay runs in a child (``replay_child``), spawned
and bounded as a check is (``bounded_child.run_child``: memory, CPU, wall clock, its process group killed on
overrun, its stdin a pipe so it never outlives the gateway), and takes one of the check places
(``check_slot``, taken by the caller). It is sent what it may read as JSON: the recorded rows, the live facts
of their sessions (the live store is only read), the catalog's routes of their tools, the settings, seeds and
bounds in force, and the paths of both rulebases; what it sends back is read within a bound. A replay that
could not finish says so (``ReplayReport.unfinished``), never what it decided so far as the whole.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sentinel_mcp.core.errors import ConsoleError
from sentinel_mcp.console.replay import Replayed, ReplayReport, routes_of
from sentinel_mcp.gateway.catalog_health import CatalogHealth
from sentinel_mcp.policy.bounded_child import ChildUnfinished, run_child
from sentinel_mcp.policy.check_process import untrusted_json
from sentinel_mcp.policy.load_rehearsal import REHEARSAL_SECONDS

MAX_REQUEST_BYTES = 32 << 20  # what a child is sent: the rows (each kept within the record's bounds), facts
DECIDING_SECONDS = 120  # the decisions, after start-up and both rulebases' rehearsed loads
WALL_SECONDS = 2 * REHEARSAL_SECONDS + DECIDING_SECONDS + 10
CHILD = "sentinel_mcp.console.replay_child"


class _TooLarge(ConsoleError):
    """The replay's request is past its bound (it is not sent)."""


def _unfinished(why: str) -> ReplayReport:
    return ReplayReport("", "", unfinished=why)


async def _facts(live_facts: Any, rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """The facts still valid in the live store of each session ``rows`` name (bookkeeping ones left out, as
    the replay does), within ``MAX_REQUEST_BYTES`` in all."""
    out: dict[str, list[Any]] = {}
    if live_facts is None:
        return out
    size = 0
    for session in sorted({str(r.get("session")) for r in rows}):
        stored = [f.model_dump(mode="json") for f in await live_facts.valid(session) if not f.internal]
        size += len(json.dumps(stored))
        if size > MAX_REQUEST_BYTES:
            raise _TooLarge
        out[session] = stored
    return out


def report_of(answer: dict[str, Any], rows: list[dict[str, Any]]) -> ReplayReport:
    """The child's report, its results' rows those of ``rows`` it names by position."""
    if answer.get("unfinished"):
        return _unfinished(str(answer["unfinished"]))
    report = ReplayReport(
        str(answer["current_version"]), str(answer["candidate_version"]), int(answer["examined"]),
        int(answer["skipped_default"]), [str(s) for s in answer["skipped_other"]],
        problems=[str(p) for p in answer["problems"]],
    )
    for r in answer["results"]:
        index = int(r["row"])
        if not 0 <= index < len(rows):
            raise IndexError(index)
        report.results.append(Replayed(
            rows[index], str(r["recorded"]), str(r["baseline"]), str(r["candidate"]),
            str(r["baseline_reason"]), str(r["candidate_reason"]), r["baseline_proof"], r["candidate_proof"],
        ))
    return report


async def replay_isolated(
    rows: list[dict[str, Any]], *, current: list[Path], candidate: list[Path], live_facts: Any, settings: Any,
    seeds: dict[str, Any], catalog: CatalogHealth | None = None, untrusted: Any = None,
    seconds: float = WALL_SECONDS,
) -> ReplayReport:
    """``replay.replay`` of ``rows`` in a child process (the same arguments, the engine the child's own).
    Call within ``check_slot``."""
    try:
        request = {
            "rows": rows, "facts": await _facts(live_facts, rows), "current": [str(f) for f in current],
            "candidate": [str(f) for f in candidate], "settings": settings.model_dump(mode="json"),
            "seeds": seeds, "untrusted": untrusted_json(untrusted),
            "routes": {k: asdict(v) for k, v in routes_of(catalog, rows).items()},
        }
        sent = json.dumps(request).encode() + b"\n"
    except (_TooLarge, TypeError, ValueError):
        sent = b""
    if not sent or len(sent) > MAX_REQUEST_BYTES:
        return _unfinished(
            "what it would replay (the recorded calls and their sessions' facts) is over "
            f"{MAX_REQUEST_BYTES >> 20} MB; replay fewer (a later 'since')"
        )
    try:
        out = await run_child(CHILD, sent, seconds)
    except ChildUnfinished as e:
        return _unfinished(f"the replay {e}")
    try:
        return report_of(json.loads(out), rows)
    except (ValueError, KeyError, TypeError, IndexError):
        return _unfinished("the replay answered what could not be read")
