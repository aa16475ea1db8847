"""What a tap's rating reads of the screen, built by one function for the rating and for the check made
before a confirmed tap is sent, so the two can never disagree.

A control's meaning is not only its own attributes: an unlabelled row means what the labels inside it say, a
switch what its row says, an "OK" what it stands under. A person's yes was given to that; if the screen
changes any of it while the question is on screen (the row said "Delete account", now "Pay $500"), the yes
does not carry over. Every part is bounded as the rules read it (``screen_context``: READ_LIMIT characters
each), and the element's own fields are the dump's, itself bounded; the digest hashes all of it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from .actions import Target
from .element_registry import Element, Snapshot
from .risk_rules import says_little
from .screen_context import row_of, screen_text, surrounding_text, toggles


def around(screen: Snapshot, e: Element) -> dict[str, Any]:
    """What the screen says around ``e`` (screen_context.py); the whole screen's words only for a label that
    says nothing of what it commits."""
    out: dict[str, Any] = {"context": surrounding_text(screen, e), "row": row_of(screen, e),
                           "toggles": toggles(screen, e)}
    if says_little(e.text or e.desc or e.hint.split(" | ")[0]):
        out["screen"] = screen_text(screen, e)
    return out


def read_target(screen: Snapshot, e: Element) -> Target:
    """``e`` as the rating reads it on ``screen``: its own fields and what the screen says around it."""
    return Target.of(e).model_copy(update={**around(screen, e), "inside": screen.inside(e)})


def reading(screen: Snapshot, ids: Sequence[str]) -> str:
    """A digest of what the rating reads of the elements ``ids`` on ``screen`` (one gone reads as gone)."""
    h = hashlib.sha256()
    for eid in ids:
        e = screen.by_id.get(eid)
        h.update(b"\x00gone" if e is None else read_target(screen, e).model_dump_json().encode())
        h.update(b"\x1e")
    return h.hexdigest()
