"""Upstreams (health, breaker, latency, tools; reconnect is the owner's) and Consents (this principal's
standing consents to personal data and sensors, revocable)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from sentinel_mcp.console.auth import Viewer
from sentinel_mcp.console.form_body import FormRefused, bounded
from sentinel_mcp.console.web import HEADERS, Console
from sentinel_mcp.gateway.consents import ConsentBook

# characters of a consent kind and purpose the revoke form takes (longer ones are revoked at the command line)
MAX_KIND = 200
MAX_PURPOSE = 200


def routes(console: Console) -> list[tuple[str, Any, list[str], bool]]:
    async def upstreams(request: Request, viewer: Viewer) -> Response:
        rt = console.runtime
        who = viewer.principal
        shown = []
        catalog = rt.catalog_health
        for up in sorted(catalog.upstreams(), key=lambda u: u.name):
            name = up.name
            if not who.may_use(name):
                continue  # an upstream this principal may not use is not shown to it
            tools = [t for t in rt.gateway.list_catalog_tools(who) if catalog.upstream_of(t.name) == name]
            shown.append(
                {
                    "name": name,
                    "state": up.state,
                    "protocol": up.protocol,
                    "breaker": up.breaker,
                    "reconnects": up.reconnects,
                    "last_error": up.last_error,
                    "tools": sorted(t.name for t in tools),
                }
            )
        # the owner's to review (console/pins_pages.py): tools held since their definition changed
        held = catalog.held_count if who.is_owner else 0
        return console.render(request, viewer, "upstreams.html", upstreams=shown, held=held)

    def _book() -> ConsentBook | None:
        gate = console.runtime.gateway.consent_gate
        return gate.book if gate is not None else None

    async def consents(request: Request, viewer: Viewer) -> Response:
        book = _book()
        items = book.list(viewer.principal.name) if book is not None else []
        return console.render(request, viewer, "consents.html", consents=items, max_kind=MAX_KIND,
                              max_purpose=MAX_PURPOSE)

    async def revoke(request: Request, viewer: Viewer) -> Response:
        book = _book()
        kind = _one(request, "kind", MAX_KIND, "the consent kind")
        purpose = _one(request, "purpose", MAX_PURPOSE, "the consent purpose")
        if book is not None:
            # the row the person pressed, by its exact kind and purpose ("*" is that row, not a pattern); the
            # principal's own only: the principal comes from the sign-in, never from the form
            book.revoke(viewer.principal.name, kind, purpose, by="console")
        return RedirectResponse("/console/consents", status_code=303, headers=HEADERS)

    return [
        ("/upstreams", upstreams, ["GET"], False),
        ("/consents", consents, ["GET"], False),
        ("/consents/revoke", revoke, ["POST"], True),
    ]


def _one(request: Request, field: str, limit: int, what: str) -> str:
    """One non-empty ``field`` of the form within its bound, else refused (400, nothing done): an absent or
    empty purpose read as "every purpose", or one of two values taken, would revoke what was not pressed."""
    values = request.state.form.getlist(field)
    if len(values) != 1:
        raise FormRefused(400, f"refused: {what} is given {len(values)} times, not once; nothing done")
    value = bounded(values[0], limit, what)
    if not value:
        raise FormRefused(400, f"refused: {what} is empty; nothing done")
    return value
