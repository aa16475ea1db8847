"""Labels too long to read whole: the risk rules read a bounded window of them, and the action is asked.

A screen writes what it likes into a label, a megabyte of it; folding and matching it whole took seconds on
the event loop for each rating (a 1 MB label of fullwidth letters: ~17 s in the rules). Cutting it first
would hide the deed at its end ("... Pay", "... Delete account") from the rules. So a field past
``READ_LIMIT`` characters is read as its first and last ``READ_LIMIT // 2`` (what the rules can still name: a
"Pay" at the end is still "moves money") and the label itself counts as a reason to ask that no model may
talk down: no real screen has a label of thousands of characters, and what was not read cannot be vouched
for.

The length is the screen's own (characters as given, before folding): a label of only combining marks or
zero-width characters folds to nothing, yet was not read either. Typed text and an SMS body are not screen
labels: the caller wrote them, the transport bounds them (``adb_request``), and the rules read them whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .actions import ProposedAction, Target
from .screen_label import READ_LIMIT

if TYPE_CHECKING:  # the firewall reads labels through this module: no import back at run time
    from .firewall import Assessment

# READ_LIMIT (screen_label.py): characters of one field the rules read: a real label is a few words, a dialog
# a page
_EDGE = READ_LIMIT // 2
# the target's own words (its label, the labels inside it, its id, class, app): past the bound, asked at high
OWN_FIELDS = ("text", "desc", "hint", "inside", "resource_id", "cls", "package", "row")
# what the screen says around it (read for a label that says little): past the bound, asked at medium
AROUND_FIELDS = ("context", "screen")


def window(text: str) -> str:
    """``text`` if it is within ``READ_LIMIT``, else its first and last ``READ_LIMIT // 2`` characters."""
    return text if len(text) <= READ_LIMIT else text[:_EDGE] + " " + text[-_EDGE:]


def unread(action: ProposedAction, *, around: bool = False) -> dict[str, int]:
    """The fields of ``action`` too long to read whole, with their lengths; ``around``: the text around the
    target too (only where it is read: a label that says little of what it commits)."""
    t = action.target
    fields = (*OWN_FIELDS, *AROUND_FIELDS) if around else OWN_FIELDS
    out = {f: len(getattr(t, f)) for f in fields if t and len(getattr(t, f)) > READ_LIMIT}
    if action.package and len(action.package) > READ_LIMIT:
        out["app"] = len(action.package)
    return out


def readable(action: ProposedAction) -> ProposedAction:
    """``action`` with each field past the bound replaced by its window (what the rules read)."""
    t = action.target
    update: dict[str, object] = {}
    if t is not None:
        cut = {f: window(getattr(t, f)) for f in (*OWN_FIELDS, *AROUND_FIELDS)
               if len(getattr(t, f)) > READ_LIMIT}
        if cut:
            update["target"] = Target.model_validate(t.model_dump() | cut)
    if action.package and len(action.package) > READ_LIMIT:
        update["package"] = window(action.package)
    return action.model_copy(update=update) if update else action


def flag_unread(a: Assessment, fields: dict[str, int]) -> None:
    """Ask about an action whose label (or the text around it) was too long to read whole."""
    own = {f: n for f, n in fields.items() if f not in AROUND_FIELDS}
    if own:
        longest = max(own.values())
        a.flag("high", f"its label is too long to read whole ({longest:,} characters)", floor="high")
    if fields.keys() & set(AROUND_FIELDS):
        a.flag("medium", "what the screen says around it is too long to read whole", floor="medium")
