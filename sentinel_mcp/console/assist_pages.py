"""Other agents asking the owner for help: the peers' HumanAssistRequests (``a2a.assist_inbox``) in the
owner's
console inbox, and the owner's reply, written exactly as ``/reply`` in ``sentinel-mcp chat`` writes it
(``AssistInbox.answer``); the A2A service waiting on the request's task sends it back to the agent that asked.

Only the owner principal sees and answers them: a peer (the principal that sent the request, signed in to its
own
console) or any other principal is told "not found", the same answer as for a made-up id. A request that came
on
a bridged chat is answered on that chat (the person's next message there is the reply), so it is not listed
here.
The reply is checked where it is kept (``core.typed_text``: no control, invisible or direction-changing
character); of two sessions answering at once, the first reply is kept and the other is told "already
answered".
Everything in a request is another agent's words: shown escaped and marked, never acted on.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from sentinel_mcp.a2a.assist_inbox import MAX_REPLY, AssistInbox  # noqa: F401 - MAX_REPLY: the page's limit
from sentinel_mcp.a2a.assist_inbox import settled_reason
from sentinel_mcp.console.auth import Viewer
from sentinel_mcp.console.web import Console
from sentinel_mcp.core.typed_text import TypedTextRefused

PREFIX = "assist-"
NOT_FOUND = "no such help request waiting for you"
REQUEST_ID = re.compile(r"^har-[0-9a-f]{10}$")


def _inbox(console: Console) -> AssistInbox | None:
    """The A2A service's inbox in this process: the one whose waiting tasks carry a reply back."""
    service = console.holder.a2a_service
    inbox = service.inbox if service is not None else None
    return inbox if isinstance(inbox, AssistInbox) else None


def _visible(viewer: Viewer, row: dict[str, Any] | None) -> bool:
    """A request this viewer may see at all: the owner's, not bridged, not the viewer's own."""
    return (
        row is not None
        and viewer.principal.is_owner
        and not row["channel"]
        and row["from_agent"] != viewer.principal.name
    )


def _answerable(viewer: Viewer, row: dict[str, Any] | None) -> bool:
    return _visible(viewer, row) and row is not None and row["status"] == "open"


_settled = settled_reason  # the terminal's /reply says the same


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


async def count_for(console: Console, viewer: Viewer) -> int:
    """How many requests wait for this viewer's reply (the console's live count): counted by the store, so a
    long inbox is counted whole (the page lists the oldest ``open_requests`` only)."""
    inbox = _inbox(console)
    if inbox is None or not viewer.principal.is_owner:
        return 0
    try:
        return await asyncio.to_thread(inbox.count_open, not_from=viewer.principal.name)
    except Exception:  # noqa: BLE001 - an unreadable inbox counts nothing; the rest of the page still works
        return 0


async def reply(console: Console, viewer: Viewer, request_id: str, form: Any) -> tuple[int, str | None]:
    """The owner's reply to one request: (status, error). 404 for anything not theirs to answer (the same for
    a
    made-up id), 409 for one of theirs answered already, 400 for a reply that cannot be kept."""
    inbox = _inbox(console)
    if inbox is None or not REQUEST_ID.fullmatch(request_id):
        return 404, NOT_FOUND
    row = await asyncio.to_thread(inbox.get, request_id)
    if row is None or not _visible(viewer, row):  # another's, a peer's own, bridged, or made up
        return 404, NOT_FOUND
    if row["status"] != "open":
        return 409, _settled(row)
    text = form.get("reply")
    if not isinstance(text, str):  # a file part, a missing field
        return 400, "write a reply first"
    try:
        done = await asyncio.to_thread(inbox.answer, request_id, text)
    except TypedTextRefused as e:  # blank, too long, or a character that changes how text reads
        return 400, str(e)
    if not done:  # answered (or expired) between the look and the write: the store took exactly one reply
        row = await asyncio.to_thread(inbox.get, request_id)
        return (409, _settled(row)) if row is not None else (404, NOT_FOUND)
    return 303, None
