"""Turning outcomes into MCP results: text for the model, structured content, and ``_meta`` for audit.

The security decision rides in ``_meta["sentinel/device-decision"]`` (and in structured content)
so the gateway's audit log and fact store can keep it with its provenance. Results carrying text that others
wrote (the screen, messages, contacts, notes, calendar events) say so in ``_meta["sentinel/untrusted"]``.
"""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult, TextContent

from .actuator import ActionOutcome
from .element_registry import Snapshot

DECISION_META = "sentinel/device-decision"
UNTRUSTED_META = "sentinel/untrusted"  # the gateway marks such results as data, not instructions
SCREEN = "the phone's screen"
DEVICE_OUTPUT = "the phone's command output"


def outcome_result(outcome: ActionOutcome, fresh: Snapshot | None = None) -> CallToolResult:
    snapshot = outcome.snapshot or fresh
    text = outcome.message
    structured: dict[str, Any] = {"status": outcome.status, "message": outcome.message, **outcome.data}
    if outcome.decision:
        structured["decision"] = outcome.decision
    if snapshot is not None:
        listing = snapshot.listing()
        structured["screen"] = {
            k: listing[k] for k in ("snapshot_id", "package", "page", "pages", "total", "elements", "cut")
        }
        text += "\n\n" + str(listing["text"])
    meta: dict[str, Any] = {DECISION_META: outcome.decision} if outcome.decision else {}
    if snapshot is not None:
        meta[UNTRUSTED_META] = SCREEN  # the screen's text is whatever the apps (and senders) put there
    elif outcome.untrusted:
        meta[UNTRUSTED_META] = outcome.untrusted  # the device's output: whatever it (and its files) say
    meta = meta or None  # type: ignore[assignment]
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=outcome.status != "done",
        _meta=meta,
    )


def read_result(text: str, data: dict[str, Any], untrusted: str | None = None) -> CallToolResult:
    """``untrusted``: where the text comes from when others wrote it (the gateway marks it as data)."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=data,
        is_error=False,
        _meta={UNTRUSTED_META: untrusted} if untrusted else None,
    )


def error_result(message: str, **data: Any) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=message)],
        structured_content={"status": "error", "message": message, **data},
        is_error=True,
    )
