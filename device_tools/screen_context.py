"""What the screen says around a control, for rating a tap on it: a button's own label often says nothing of
what it commits ("OK" under "Delete 14 conversations?", "Continue" under "Erase all data?", a "✓"), a switch
has no label of its own (its row has), and a settings row flips the switch it holds.

Read from one snapshot (document pre-order: an element's subtree is the run after it that is deeper), bounded:
every string here is screen text (hostile) and is only ever rated and shown escaped.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

from .element_registry import Element, Snapshot
from .label_window import READ_LIMIT

# characters of surrounding text kept for a tap (rated, shown cut; never run): as much as the rules read
# whole, and one more when there was more (a text cut there is too long to read whole: the tap is asked,
# label_window.py), so neither the join nor the rules walk a hostile screen's 100k labels to their end
CONTEXT_LIMIT = READ_LIMIT
SCREEN_LIMIT = READ_LIMIT  # the rest of the screen, for a tap whose label says nothing (strong words only)
ROW_LIMIT = READ_LIMIT  # a switch's row names it and says what it does: read as far as a label is


def ancestors(snapshot: Snapshot, e: Element) -> list[Element]:
    """The listed elements that enclose ``e``, nearest first."""
    out: list[Element] = []
    depth = e.depth
    for k in range(e.index - 2, -1, -1):
        a = snapshot.elements[k]
        if a.depth < depth:
            out.append(a)
            depth = a.depth
            if depth == 0:
                break
    return out


def subtree(snapshot: Snapshot, a: Element) -> Iterator[Element]:
    """The listed elements inside ``a``, in order (read only as far as they are used)."""
    for k in range(a.index, len(snapshot.elements)):
        d = snapshot.elements[k]
        if d.depth <= a.depth:
            return
        yield d


def _words_of(e: Element) -> str:
    return (e.text or e.desc).strip()


def _joined(texts: Iterable[str], limit: int) -> str:
    """The distinct ``texts`` joined, read no further than ``limit`` characters: past it, the first ``limit``
    and "…" (``limit + 1`` characters: more than was read whole)."""
    seen: set[str] = set()
    parts: list[str] = []
    size = 0
    for t in texts:
        if not t or t in seen:
            continue
        seen.add(t)
        parts.append(t)
        size += len(t) + 3
        if size > limit + 3:
            break
    out = " | ".join(parts)
    return out if len(out) <= limit else out[:limit] + "…"


def _others(snapshot: Snapshot, a: Element, e: Element) -> Iterator[str]:
    """The labels of ``a`` and the elements inside it, but ``e``'s."""
    return (_words_of(x) for x in itertools.chain((a,), subtree(snapshot, a)) if x is not e)


def surrounding_text(snapshot: Snapshot, e: Element) -> str:
    """The text a control stands under: the labels (a dialog's title and message, a page's heading, whether
    or not the screen marks them clickable) in its nearest enclosing container that has any other, else on
    the whole screen."""
    for a in ancestors(snapshot, e):
        if any(_others(snapshot, a, e)):
            return _joined(_others(snapshot, a, e), CONTEXT_LIMIT)
    return _joined((_words_of(x) for x in snapshot.elements if x is not e), CONTEXT_LIMIT)


def screen_text(snapshot: Snapshot, e: Element) -> str:
    """Every other label on the screen: where a hostile screen may put what a bare "OK" commits (beyond the
    button bar it sits in, after a page of filler), for the strong words only (risk_rules ``_commits``)."""
    return _joined((_words_of(x) for x in snapshot.elements if x is not e), SCREEN_LIMIT)


def row_of(snapshot: Snapshot, e: Element) -> str:
    """For a control without a label of its own (a switch): the labels of the row it sits in."""
    if e.text or e.desc:
        return ""
    for a in ancestors(snapshot, e):
        if any(_others(snapshot, a, e)):
            return _joined(_others(snapshot, a, e), ROW_LIMIT)
    return ""


def toggles(snapshot: Snapshot, e: Element) -> bool:
    """Whether a tap on ``e`` flips a switch: it is one, or it is a row holding one (Android's preference
    rows pass a tap on the row to their switch)."""
    return e.checkable or any(d.checkable for d in subtree(snapshot, e))
