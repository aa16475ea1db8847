"""Sessions and facts: a principal's conversations, each with its facts (provenance, remaining time to live),
bound contexts, answers and approvals; any fact can be revoked (it is gone from the store and the engine, so
the next call that needs it fetches it again or asks again)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from sentinel_mcp.console.auth import Viewer
from sentinel_mcp.console.form_values import stored_text
from sentinel_mcp.console.query_params import read_query, takes_query
from sentinel_mcp.console.links import console_path
from sentinel_mcp.console.web import HEADERS, Console
from sentinel_mcp.core.session_facts import SessionFacts
from sentinel_mcp.identity.principal import Principal

MAX_SESSIONS = 500
# facts (and approvals) listed on a session's page: a conversation keeps up to 50,000 facts its reads taught,
# and listing them all made a 40 MB page whose rendering held the gateway's event loop (every call) for 3 s
# on each view; the rest are reached by a filter on their text
MAX_FACTS_SHOWN = 500
MAX_QUERY = 200  # characters of the fact filter (the page's field says so too)


def owns_session(principal: Principal, session: str) -> bool:
    """Session ids begin with their principal's name (conversations.py): ``alice/http-…``."""
    return isinstance(session, str) and session.startswith(principal.name + "/")


def _store(console: Console, principal: Principal) -> SessionFacts | None:
    # the viewer's own look: what its policy tools withhold stays out of its pages too
    return console.runtime.gateway.guard.session_facts(principal.name)


def routes(console: Console) -> list[tuple[str, Any, list[str], bool]]:
    async def sessions(request: Request, viewer: Viewer) -> Response:
        store = _store(console, viewer.principal)
        ids = [
            s
            for s in (await store.sessions() if store is not None else [])
            if owns_session(viewer.principal, s)
        ]
        counts = {s: await store.count(s) for s in ids[-MAX_SESSIONS:]} if store is not None else {}
        return console.render(request, viewer, "sessions.html", sessions=counts, policy=store is not None)

    @takes_query(q=MAX_QUERY)
    async def session(
        request: Request, viewer: Viewer, *, error: str | None = None, status: int = 200
    ) -> Response:
        sid = str(request.path_params["sid"])
        store = _store(console, viewer.principal)
        if store is None or not owns_session(viewer.principal, sid):
            return console.problem(request, viewer, 404, "no such session of yours")
        wanted = read_query(request, {"q": MAX_QUERY})["q"]
        facts = [f for f in await store.valid(sid) if wanted.lower() in f.fact.lower()]
        shown = [f for f in facts if not f.internal]
        approvals = [f for f in facts if f.internal and f.predicate == "$confirmed"]
        return console.render(
            request,
            viewer,
            "session.html",
            status=status,
            sid=sid,
            facts=shown[:MAX_FACTS_SHOWN],
            approvals=approvals[:MAX_FACTS_SHOWN],
            unlisted=max(0, len(shown) - MAX_FACTS_SHOWN) + max(0, len(approvals) - MAX_FACTS_SHOWN),
            wanted=wanted,
            contexts=await store.contexts(sid),
            error=error,
        )

    async def revoke(request: Request, viewer: Viewer) -> Response:
        sid = str(request.path_params["sid"])
        store = _store(console, viewer.principal)
        if store is None or not owns_session(viewer.principal, sid):
            return console.problem(request, viewer, 404, "no such session of yours")
        wanted = request.state.form.get("fact")
        # only a fact the store holds for this session, by its exact text: a form never supplies a pattern
        valid = await store.valid(sid)
        if isinstance(wanted, str):  # a text the browser would not send back as it is came as its digest
            wanted = stored_text(wanted, [f.fact for f in valid])
        fact = next((f for f in valid if f.fact == wanted), None)
        if fact is None:
            return await session(
                request,
                viewer,
                error="that fact is not in this session (expired or revoked already)",
                status=404,
            )
        await store.revoke(sid, fact.fact)  # from the store and the engine's mirror of a loaded session
        console.inbox.notify(viewer.principal.name, "activity")
        return RedirectResponse(console_path("sessions", sid), status_code=303, headers=HEADERS)

    return [
        ("/sessions", sessions, ["GET"], False),
        ("/sessions/{sid:key}/revoke", revoke, ["POST"], True),
        ("/sessions/{sid:key}", session, ["GET"], False),
    ]
