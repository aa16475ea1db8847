"""Held tools: the owner reviews an upstream tool whose definition changed since it was pinned and accepts
exactly the definition shown (``gateway/tool_pins.py``; the same as ``sentinel-mcp pins show`` and
``accept --digest``). The running gateway sees the accept within seconds and serves the tool again.

Only the owner: whoever accepts a changed tool decides what every principal's calls reach. The accept form
carries the digest of the definition its page showed; a definition that changed again since is refused (409)
with the new one to review, so an upstream cannot swap in a third definition between look and click.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from sentinel_mcp.console.auth import Viewer
from sentinel_mcp.console.form_body import bounded
from sentinel_mcp.console.query_params import read_query, takes_query
from sentinel_mcp.console.web import HEADERS, Console
from sentinel_mcp.gateway.tool_pins import FILE_NAME, ToolPins, changed_fields

MAX_LISTED = 500  # held tools on the list page (the rest counted)
NAME_LIMIT = 300  # characters of a tool's identity taken from a query or a form


def _pins(console: Console) -> ToolPins:
    # a reader of its own: the file is merged under its lock, as the CLI's is
    return ToolPins(console.runtime.config.data_dir / FILE_NAME)


def _text(value: Any) -> str:
    # ASCII-escaped JSON: a description's hidden characters and look-alikes are shown as what they are
    return json.dumps(value, indent=2, ensure_ascii=True, sort_keys=True)


def _owner_only(console: Console, request: Request, viewer: Viewer) -> Response | None:
    if viewer.principal.is_owner:
        return None
    return console.problem(request, viewer, 403, "only the owner reviews and accepts changed tools")


def _review(pins: ToolPins, identity: str) -> dict[str, Any] | None:
    shown = pins.shown(identity)
    if shown is None or shown["held"] is None:
        return None
    pinned, held = shown["pinned"], shown["held"]
    old, new = pinned.get("definition"), held.get("definition")
    fields = [
        {"name": f, "pinned": _text(old.get(f)), "held": _text(new.get(f))}
        for f in changed_fields(old, new)
    ] if old is not None and new is not None else []
    return {
        "tool": identity, "pinned_at": pinned["pinned_at"], "pinned_digest": pinned["digest"],
        "seen_at": held["seen_at"], "digest": held["digest"], "fields": fields,
        "complete": old is not None and new is not None,
        # the pinned one not kept: the held one is shown whole, nothing to compare it with
        "held_whole": _text(new) if old is None and new is not None else None,
        # only a definition the page shows is accepted here: one past what the pins keep (an upstream can
        # make it so) has its digest alone, and accepting it pinned what nobody had read
        "acceptable": new is not None,
    }


NOT_SHOWN = ("not accepted: the definition held is larger than Sentinel keeps to show, so no page has shown "
             "it, and it is never accepted; review the upstream itself, then forget the tool's pin "
             "(`sentinel-mcp pins forget TOOL`: its next listing is pinned as first seen)")


def routes(console: Console) -> list[tuple[str, Any, list[str], bool]]:
    async def held(request: Request, viewer: Viewer) -> Response:
        if (refused := _owner_only(console, request, viewer)) is not None:
            return refused
        pins = await asyncio.to_thread(_pins, console)
        rows = [e for e in pins.entries() if e["held"]]
        return console.render(request, viewer, "pins.html", held=rows[:MAX_LISTED],
                              more=max(0, len(rows) - MAX_LISTED), problem=pins.problem)

    def _show(request: Request, viewer: Viewer, pins: ToolPins, identity: str, status: int = 200,
              note: str = "") -> Response:
        review = _review(pins, identity)
        if review is None:
            return console.problem(request, viewer, 404, "no such held tool (accepted, or never held)")
        return console.render(request, viewer, "pin.html", status=status, pin=review, note=note)

    @takes_query(tool=NAME_LIMIT)
    async def one(request: Request, viewer: Viewer) -> Response:
        if (refused := _owner_only(console, request, viewer)) is not None:
            return refused
        pins = await asyncio.to_thread(_pins, console)
        wanted = read_query(request, {"tool": NAME_LIMIT})["tool"]
        return _show(request, viewer, pins, wanted)

    async def accept(request: Request, viewer: Viewer) -> Response:
        if (refused := _owner_only(console, request, viewer)) is not None:
            return refused
        form = request.state.form
        tools, digests = form.getlist("tool"), form.getlist("digest")  # a field given twice is ambiguous
        if len(tools) != 1 or len(digests) != 1 or not all(isinstance(v, str) for v in (*tools, *digests)):
            return console.problem(request, viewer, 400, "the form names one tool and the digest it showed")
        # past the bound refused, never cut: a cut name is another tool's, whose change would be accepted
        identity, digest = bounded(tools[0], NAME_LIMIT, "the tool name"), str(digests[0])
        if not identity or len(digest) != 64:
            return console.problem(request, viewer, 400, "the form names one tool and the digest it showed")
        pins = await asyncio.to_thread(_pins, console)
        if pins.problem is not None:
            return console.problem(request, viewer, 503, f"the pins file cannot be read: {pins.problem}")
        review = _review(pins, identity)
        if review is not None and not review["acceptable"]:
            return _show(request, viewer, pins, identity, 409, NOT_SHOWN)
        accepted = await asyncio.to_thread(pins.accept, [identity], digest)
        if identity in accepted:
            return RedirectResponse("/console/pins", status_code=303, headers=HEADERS)
        # still held under another digest (the upstream changed it again since the page was shown), or gone
        return _show(request, viewer, pins, identity, 409,
                     "not accepted: the definition changed again since the page you accepted on; this is the "
                     "one held now")

    return [
        ("/pins", held, ["GET"], False),
        ("/pins/tool", one, ["GET"], False),
        ("/pins/accept", accept, ["POST"], True),
    ]
