"""Which element a finger at (x, y) acts on, as Android dispatches a touch: the topmost element there that
handles touches. In a uiautomator dump, later in document order is drawn later, so on top (a node's children
after it, a later sibling's subtree after an earlier one); a node that is not clickable, long-clickable,
checkable or editable lets the touch through to what lies under it.

Why it matters: the firewall rates the element an action names, but the device acts on the element that
receives the touch. A screen can put a "Cancel" under "Transfer now" (same bounds, or a bigger Cancel whose
centre lies under the button), or label a container "Cancel" over a "Buy" child at its centre. An action is
sent only when the element that receives it is the element that was rated.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .element_registry import Element, Snapshot


def touchable(e: Element) -> bool:
    return e.clickable or e.long_clickable or e.checkable or e.editable


def contains(bounds: tuple[int, int, int, int], x: int, y: int) -> bool:
    x1, y1, x2, y2 = bounds
    return x1 <= x < x2 and y1 <= y < y2


def under_finger(snapshot: Snapshot, x: int, y: int) -> Iterator[Element]:
    """Every touch-handling element at (x, y), topmost first."""
    return (e for e in reversed(snapshot.elements) if touchable(e) and contains(e.bounds, x, y))


def receiver(snapshot: Snapshot, x: int, y: int) -> Element | None:
    """The element a tap at (x, y) reaches (None: nothing there handles touches)."""
    return next(under_finger(snapshot, x, y), None)


def is_ancestor(snapshot: Snapshot, a: Element, d: Element) -> bool:
    """Whether ``a`` encloses ``d`` in the view tree (elements are in document pre-order: ``a``'s subtree is
    the run of elements after it that are deeper than it)."""
    start, end = a.index - 1, d.index - 1
    return start < end and all(snapshot.elements[k].depth > a.depth for k in range(start + 1, end + 1))


def tap_receivers(snapshot: Snapshot, target: Element) -> list[Element] | str:
    """What a tap at ``target``'s centre acts on, to be rated together: the target itself, or a label and the
    row that holds it (a tap on text that does not handle touches reaches the enclosing control). A string
    says why the tap is refused: another element, drawn over the point or inside the target, would get it.
    """
    x, y = target.center
    if snapshot.truncated_nodes:
        return (
            f"refused: this screen has too many nodes to read whole, so what lies over {target.id} "
            f"({target.shown}) is unknown. Nothing was sent"
        )
    for seq, bounds in snapshot.unlisted:
        if seq > target.seq and contains(bounds, x, y):
            return (
                f"refused: a control nested too deep to list lies over the centre of {target.id} "
                f"({target.shown}). Nothing was sent"
            )
    hit = receiver(snapshot, x, y)
    if hit is None or hit.id == target.id:
        return [target]
    if not touchable(target) and is_ancestor(snapshot, hit, target):
        return [target, hit]
    return (
        f"refused: a tap at the centre of {target.id} ({target.shown}) would reach {hit.id} "
        f"({hit.shown}), which lies over that point. Nothing was sent; act on {hit.id} itself if that is "
        "what you mean"
    )


# classes a drag moves though a dump may say they take no touch (a SeekBar is focusable, not "clickable")
SLIDERS = ("SeekBar", "Slider", "RangeSlider", "RatingBar", "SwipeButton", "SlideToActView")


def slider(e: Element) -> bool:
    return e.cls.rsplit(".", 1)[-1].endswith(SLIDERS)


def dragged(e: Element) -> bool:
    """Whether a swipe across ``e`` acts on it: a control that takes touches (a button a short drag still
    presses) or a slider, except a scrolling container that says nothing itself (a list: what a scroll is
    for). A scrollable that has a label of its own ("Slide to pay $500") is judged by it: the screen sets
    the flag where it likes."""
    if not (touchable(e) or slider(e)):
        return False
    return not e.scrollable or bool(e.text or e.desc) or slider(e)


def drag_receivers(snapshot: Snapshot, points: Iterable[tuple[int, int]]) -> list[Element] | str:
    """What a swipe (a scroll is one) whose finger goes down and lifts at ``points`` may act on: every
    element there a drag acts on (``dragged``: a "slide to pay" control, a button a drag still presses),
    whichever the screen really puts on top. A string says why the swipe is refused: part of the screen
    was not read (too many nodes), or a control too deep to list lies under a point."""
    found: dict[str, Element] = {}
    for x, y in points:
        if snapshot.truncated_nodes:
            return (
                "refused: this screen has too many nodes to read whole, so what a swipe there presses is "
                "unknown. Nothing was sent"
            )
        if any(x1 <= x < x2 and y1 <= y < y2 for _, (x1, y1, x2, y2) in snapshot.unlisted):
            return (
                f"refused: a control nested too deep to list lies under ({x}, {y}), where the swipe presses "
                "or lifts. Nothing was sent"
            )
        found.update(
            (e.id, e) for e in reversed(snapshot.elements) if dragged(e) and contains(e.bounds, x, y)
        )
    return list(found.values())
