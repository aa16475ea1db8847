"""Activity: the audit log, filterable by session, tool, decision and time (and, for the owner, principal);
each row opens its proof as a readable tree, with the facts it rests on and their remaining time to live; a
proof the viewer's own ``sentinel_why_not`` would withhold is withheld here alike."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from sentinel_mcp.console import audit_view
from sentinel_mcp.console.auth import Viewer
from sentinel_mcp.console.form_body import FormRefused
from sentinel_mcp.console.proof_view import facts_in, proof_nodes
from sentinel_mcp.console.query_params import takes_query
from sentinel_mcp.console.rulebase_readers import may_read_rulebase
from sentinel_mcp.console.session_pages import owns_session
from sentinel_mcp.console.web import Console
from sentinel_mcp.policy.version_readers import row_without_version


def routes(console: Console) -> list[tuple[str, Any, list[str], bool]]:
    @takes_query(**{name: audit_view.MAX_FILTER for name in audit_view.FILTERS})
    async def activity(request: Request, viewer: Viewer) -> Response:
        f = audit_view.Filters.of(request)
        if not viewer.principal.is_owner and f.principal not in ("", viewer.principal.name):
            # another's rows are the owner's to filter by: ignored, the address named them over one's own
            raise FormRefused(400, "refused: the principal filter is the owner's (your rows are your own)")
        found = await audit_view.rows(audit_view.AuditSource.of(console.runtime), viewer.principal, f)
        if not may_read_rulebase(console.runtime.gateway, viewer.principal):
            found = [row_without_version(r) for r in found]
        return console.render(request, viewer, "activity.html", rows=found, filters=f,
                              decisions=audit_view.DECISIONS, chain_states=audit_view.CHAIN_STATES,
                              stages=audit_view.STAGES)

    async def proof(request: Request, viewer: Viewer) -> Response:
        row = await audit_view.row(audit_view.AuditSource.of(console.runtime), viewer.principal,
                                   str(request.path_params["row"]))
        if row is None:
            return console.problem(request, viewer, 404, "no such call in your activity")
        if not may_read_rulebase(console.runtime.gateway, viewer.principal):  # the version is the readers'
            row = row_without_version(row)
        store = console.runtime.gateway.guard.session_facts(viewer.principal.name)
        proof = row.get("proof")
        if store is not None:  # the viewer's own look: what its sentinel_why_not would withhold stays out
            proof = await store.shown_proof(str(row.get("session") or ""), proof)
        root, rest = proof_nodes(proof)
        ttl: dict[str, Any] = {}
        if root is not None and store is not None and owns_session(viewer.principal, row.get("session", "")):
            wanted = set(facts_in(root))
            for fact in await store.valid(row["session"]):
                if fact.fact in wanted:
                    ttl[fact.fact] = fact
        return console.render(request, viewer, "proof.html", row=row, root=root, rest=rest, live=ttl,
                              stages=audit_view.STAGES)

    return [("/activity", activity, ["GET"], False), ("/activity/{row}", proof, ["GET"], False)]
