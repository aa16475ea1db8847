"""How a help request is shown to the person in a terminal (``sentinel-mcp chat``): Sentinel's attribution on
a line of its own, then the peer's words on theirs, marked as another agent's.

The two are never one string: a peer that ends its reason with an attribution of its own ("... (says agent_id
'owner')", on a new line, in look-alike parentheses, behind a direction override) is read as the peer's text,
because everything the peer wrote sits after the label Sentinel puts before it, its line breaks and hidden
characters made visible (``core/display_text``). The console does the same with elements (``inbox.html``).
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.display_text import Marked, compose, safe_text

WORDS_LABEL = "  its words (another agent's, untrusted): "


def attribution(row: dict[str, Any]) -> Marked:
    """Sentinel's word on who sent it: the authenticated principal, and the id it claims (as its claim)."""
    said = compose("Sentinel: sent by ", safe_text(row["from_agent"], 80), " (authenticated)")
    if row.get("says_agent"):
        said = compose(said, "; it calls itself ", safe_text(row["says_agent"], 80), " (its own word)")
    return said


def assist_lines(row: dict[str, Any]) -> list[Marked]:
    """The lines a terminal prints for one request: Sentinel's first, the peer's words, its questions."""
    head = compose("[help request ", safe_text(row["id"], 40), "] ", attribution(row))
    lines = [head, compose(WORDS_LABEL, safe_text(row["reason"], 500))]
    lines += [compose("    - ", safe_text(q, 300)) for q in row.get("questions") or []]
    return lines
