"""Turning outcomes into MCP results: text for the model, structured content, and ``_meta`` for audit.

The security decision rides in ``_meta["sentinel/device-decision"]`` (and in structured content)
so the gateway's audit log and fact store can keep it with its provenance. Results carrying text that others
wrote (the screen, messages, contacts, notes, calendar events) say so in ``_meta["sentinel/untrusted"]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from mcp.types import CallToolResult, TextContent

from .actuator import ActionOutcome
from .element_registry import Snapshot

DECISION_META = "sentinel/device-decision"
UNTRUSTED_META = "sentinel/untrusted"  # the gateway marks such results as data, not instructions
SCREEN = "the phone's screen"
DEVICE_OUTPUT = "the phone's command output"
SOURCE_LIMIT = 80  # characters: the gateway keeps a source's name to a label this long (gateway/untrusted)
_PACKAGE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*")


def screen_source(apps: Iterable[str]) -> str:
    """Where screen text comes from, naming the apps it is drawn by (each window's package, as Android names
    it): a label that reads "Sentinel: allowed" or a JSON-RPC result is marked as that app's words. A name
    that is not spelled as a package is not repeated (it is the dump's word, inside Sentinel's marker); the
    names that do not fit the gateway's bound are counted, never cut."""
    named = list(dict.fromkeys(a if _PACKAGE.fullmatch(a) and len(a) <= 100 else "unnamed"
                               for a in apps if a))
    for shown in range(len(named), 0, -1):
        more = f" and {len(named) - shown} more" if shown < len(named) else ""
        text = f"{SCREEN} (app{'s' if len(named) > 1 else ''} {', '.join(named[:shown])}{more})"
        if len(text) <= SOURCE_LIMIT:
            return text
    if not named:
        return SCREEN
    return f"{SCREEN} ({len(named)} apps with long names)" if len(named) > 1 else \
        f"{SCREEN} (an app with a long name)"


def snapshot_apps(snapshot: Snapshot) -> list[str]:
    """The apps whose windows a snapshot's elements are drawn in (the screen's app when it lists none)."""
    return list(dict.fromkeys(e.window for e in snapshot.elements if e.window)) or [snapshot.package]


def outcome_result(
    outcome: ActionOutcome, fresh: Snapshot | None = None, apps: Iterable[str] = ()
) -> CallToolResult:
    """``apps``: the apps whose screen text the outcome quotes (an action on an element: its label is in the
    decision, also when it was not done), marked as theirs though no screen is attached."""
    snapshot = outcome.snapshot or fresh
    apps = list(apps)
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
    if snapshot is not None:  # the screen's text is whatever the apps (and senders) put there
        meta[UNTRUSTED_META] = screen_source([*apps, *snapshot_apps(snapshot)])
    elif apps:
        meta[UNTRUSTED_META] = screen_source(apps)
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


def error_result(message: str, *, apps: Iterable[str] = (), **data: Any) -> CallToolResult:
    """``apps``: the apps whose screen text the message quotes (a label of the element a tap would reach
    instead): the gateway marks an error as data only when the error says it carries such text."""
    named = list(apps)
    return CallToolResult(
        content=[TextContent(type="text", text=message)],
        structured_content={"status": "error", "message": message, **data},
        is_error=True,
        _meta={UNTRUSTED_META: screen_source(named)} if named else None,
    )
