"""The child side of ``replay_process``: one what-if replay, in a process of its own with its own SWI-Prolog.

Reads one request line on stdin (JSON: the recorded rows, the live facts of their sessions, the catalog's
routes, the settings, seeds and bounds in force, the paths of both rulebases), runs ``replay.replay`` on this
process's own engine and writes the report as one JSON object on stdout; a changed call's two proofs are
rendered here (the engine that kept them is this one). stdin stays open while the parent waits: at its end
(the parent gone, even killed) this process ends too, whatever the replay is doing.

    python -m sentinel_mcp.console.replay_child < request.json
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sentinel_mcp.config import PolicySettings
from sentinel_mcp.console.replay import ReplayReport, Route, replay
from sentinel_mcp.core.lazy_proof import LazyProof
from sentinel_mcp.policy.check_child import serve_one, untrusted_of
from sentinel_mcp.policy.fact_store import Fact


class _LiveFacts:
    """The live store's facts the parent sent, read as the replay reads the store (``valid``)."""

    def __init__(self, facts: dict[str, list[Any]]) -> None:
        self._facts = {s: [Fact.model_validate(f) for f in fs] for s, fs in facts.items()}

    async def valid(self, session: str) -> list[Fact]:
        return list(self._facts.get(session, []))


async def _shown(proof: Any) -> Any:
    return await proof.rendered() if isinstance(proof, LazyProof) else proof


async def _report_json(report: ReplayReport, rows: list[dict[str, Any]]) -> dict[str, Any]:
    position = {id(r): i for i, r in enumerate(rows)}
    results = []
    for r in report.results:
        # only a change shows its proofs (side by side): the others' are not rendered, nor sent
        results.append({
            "row": position[id(r.row)], "recorded": r.recorded, "baseline": r.baseline,
            "candidate": r.candidate, "baseline_reason": r.baseline_reason,
            "candidate_reason": r.candidate_reason,
            "baseline_proof": await _shown(r.baseline_proof) if r.changed else None,
            "candidate_proof": await _shown(r.candidate_proof) if r.changed else None,
        })
    return {
        "current_version": report.current_version, "candidate_version": report.candidate_version,
        "examined": report.examined, "skipped_default": report.skipped_default,
        "skipped_other": report.skipped_other, "problems": report.problems, "results": results,
    }


async def _replay(request: dict[str, Any]) -> dict[str, Any]:
    from sentinel_mcp.policy.engine import shared_engine

    rows = list(request["rows"])
    report = await replay(
        rows,
        current=[Path(f) for f in request["current"]],
        candidate=[Path(f) for f in request["candidate"]],
        live_facts=_LiveFacts(request["facts"]),
        settings=PolicySettings.model_validate(request["settings"]),
        seeds=dict(request["seeds"]),
        engine=shared_engine(),
        routes={k: Route(**v) for k, v in request["routes"].items()},
        untrusted=untrusted_of(request.get("untrusted")),
    )
    return await _report_json(report, rows)


def main() -> None:
    serve_one(_replay)

if __name__ == "__main__":
    main()
