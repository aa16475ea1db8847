"""Other agents asking the owner for help: the peers' HumanAssistRequests (``a2a.assist_inbox``) in the owner's
console inbox, and the owner's reply, written exactly as ``/reply`` in ``sentinel-mcp chat`` writes it
(``AssistInbox.answer``); the A2A service waiting on the request's task sends it back to the agent that asked.

Only the owner principal sees and answers them: a peer (the principal that sent the request, signed in to its own
console) or any other principal is told "not found", the same answer as for a made-up id. A request that came on
a bridged chat is answered on that chat (the person's next message there is the reply), so it is not listed here.
Everything in a request is another agent's words: shown escaped and marked, never acted on.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from sentinel_mcp.a2a.assist_inbox import MAX_REPLY, AssistInbox
from sentinel_mcp.console.auth import Viewer
from sentinel_mcp.console.web import Console

PREFIX = "assist-"
REQUEST_ID = re.compile(r"^har-[0-9a-f]{10}$")


def _inbox(console: Console) -> AssistInbox | None:
    """The A2A service's inbox in this process: the one whose waiting tasks carry a reply back."""
    service = console.holder.a2a_service
    return getattr(service, "inbox", None) if service is not None else None


def _answerable(viewer: Viewer, row: dict[str, Any] | None) -> bool:
    return (row is not None and viewer.principal.is_owner and row["status"] == "open" and not row["channel"]
            and row["from_agent"] != viewer.principal.name)


async def open_for(console: Console, viewer: Viewer) -> list[dict[str, Any]]:
    """The open requests this viewer may answer (none unless the viewer is the owner)."""
    inbox = _inbox(console)
    if inbox is None or not viewer.principal.is_owner:
        return []
    try:
        rows = await asyncio.to_thread(inbox.open_requests)
    except Exception:  # noqa: BLE001 - an unreadable inbox shows nothing; the rest of the page still works
        return []
    return [r for r in rows if _answerable(viewer, r)]


async def reply(console: Console, viewer: Viewer, request_id: str, form: Any) -> tuple[int, str | None]:
    """The owner's reply to one request: (status, error). 404 for anything not theirs to answer."""
    inbox = _inbox(console)
    if inbox is None or not REQUEST_ID.match(request_id):
        return 404, "no such help request waiting for you"
    row = await asyncio.to_thread(inbox.get, request_id)
    if not _answerable(viewer, row):  # another's, a peer's own, bridged, answered already, or made up
        return 404, "no such help request waiting for you (answered already, or expired)"
    text = form.get("reply")
    if not isinstance(text, str) or not text.strip():  # a file part, a missing field, blank
        return 400, "write a reply first"
    if len(text) > MAX_REPLY:
        return 400, f"a reply is at most {MAX_REPLY} characters"
    if not await asyncio.to_thread(inbox.answer, request_id, text):
        return 404, "no such help request waiting for you (answered already, or expired)"
    return 303, None
