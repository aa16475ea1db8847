"""Agent: the phone agent's runs of the signed-in principal (goal, status, steps) and each run's trace: what
the
agent saw, what the model decided, the guarded call (tool, arguments), the guard's answer, the outcome and its
timing, each step linked to its audit row. Only the principal that started a run sees it (another one's run is
"not found"). Pages follow a running run live (the SSE event ``agent``).

Everything shown came from the phone's screen or the model (hostile text): autoescaped, made visible by
``shown``.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from sentinel_mcp.console import audit_view
from sentinel_mcp.console.auth import Viewer
from sentinel_mcp.console.links import console_path
from sentinel_mcp.console.web import HEADERS, Console
from sentinel_mcp.core.builtin import RunTraces

RUN_ID = re.compile(r"^run-[0-9a-f]{12}$")
DECISION_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,80}$")


def watch(rt: Any, inbox: Any) -> None:
    """Tell a principal's open consoles when one of its runs changes (called once the runtime runs)."""
    store = rt.services.agent_traces
    if store is not None:
        store.listeners.append(
            lambda principal, _run: inbox.notify(principal or None, "agent") if principal else None
        )


def _store(console: Console) -> RunTraces | None:
    return console.runtime.services.agent_traces


def _held(console: Console, principal: str) -> frozenset[str] | None:
    """The kinds of personal data ``principal`` holds a live consent for (any purpose): what a run of theirs
    read of any other kind is taken out of its trace (None: no consent gate, nothing is gated)."""
    gate = console.runtime.gateway.consent_gate
    if gate is None:
        return None
    return frozenset(c.kind for c in gate.book.list(principal))


def routes(console: Console) -> list[tuple[str, Any, list[str], bool]]:
    async def runs(request: Request, viewer: Viewer) -> Response:
        store = _store(console)
        name = viewer.principal.name
        found = await store.runs(name, 50, _held(console, name)) if store is not None else []
        return console.render(request, viewer, "agent_runs.html", runs=found, available=store is not None)

    async def run(request: Request, viewer: Viewer) -> Response:
        store, run_id = _store(console), str(request.path_params["run"])
        found = (
            await store.run(viewer.principal.name, run_id, _held(console, viewer.principal.name))
            if store is not None and RUN_ID.fullmatch(run_id)
            else None
        )
        if found is None:  # another principal's run, or none: the same answer
            return console.problem(request, viewer, 404, "no such agent run of yours")
        return console.render(request, viewer, "agent_run.html", run=found)

    async def audit_row(request: Request, viewer: Viewer) -> Response:
        """A step's decision id -> its row on the Activity page (only within the viewer's own rows)."""
        wanted = str(request.path_params["decision"])
        if DECISION_ID.fullmatch(wanted):
            rows = await audit_view.rows(
                audit_view.AuditSource.of(console.runtime),
                viewer.principal,
                audit_view.Filters(),
                limit=audit_view.SCAN,
            )
            for r in rows:  # newest first: the row with the call's final outcome
                if r.get("decision_id") == wanted:
                    return RedirectResponse(
                        console_path("activity", r["key"]), status_code=303, headers=HEADERS
                    )
        return console.problem(request, viewer, 404, "no such call in your activity")

    return [
        ("/agent", runs, ["GET"], False),
        ("/agent/{run}", run, ["GET"], False),
        ("/agent/audit/{decision}", audit_row, ["GET"], False),
    ]
