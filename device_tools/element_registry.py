"""Observer: a uiautomator dump parsed into grounded, stable element ids.

Which fields make an id (and why):
- resource-id, class and content-desc: set by the app, unchanged by the user's input.
- text, but only for non-editable nodes: there it is a label ("Send", a contact's name) that tells
  list rows apart. An editable field's text is what the user typed, so it is left out; otherwise
  the field's id would change with every keystroke.
- the ancestors' class and resource-id (the parent path), not their sibling index: inserting a row
  above must not renumber the rows below.
- for an unlabeled container (a list row), the first label among its descendants.
- an ordinal only when two nodes still collide, in document order.
Bounds, checked, focused and selected are state, not identity: they go into the element's
*fingerprint*, which the actuator compares to refuse actions on a changed element. So do the labels and
switch states of every node inside it (``_inner_digests``): a row means what its labels say, and a row whose
inside changed is not the row the caller chose. What a tap on an element can activate is rated by every
label, content-desc and resource id inside it (``Snapshot.inside``, read on demand and bounded), not by its
first label only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field

from .device_words import quoted
from .errors import DumpFailed
from .screen_label import LABEL_LIMIT, READ_LIMIT, cut, label_repr, was_cut

MAX_DEPTH = 50
MAX_NODES = 5000  # nodes walked per dump: a busy real screen has a few hundred
MAX_DUMP_BYTES = 4_000_000  # a busy real screen's dump is 50-300 KB
PAGE_SIZE = 60
# characters of one listing page's text and structured content together: a page ends early past it (its
# other elements go to the next page, none is dropped); one element's share is bounded by the label cut
PAGE_BUDGET = 32_000
_FEED = 65536  # parsed a slice at a time: the parse runs in a worker thread, and lets the event loop in
# a node's Rect as uiautomator writes it (Rect.toShortString): four ASCII int32s, nothing around them
_BOUNDS = re.compile(r"\[(-?[0-9]{1,10}),(-?[0-9]{1,10})\]\[(-?[0-9]{1,10}),(-?[0-9]{1,10})\]")
_INT32 = range(-(2**31), 2**31)
# what a class, a resource id or a package is spelled with: shown bare in a listing only then. The app (a
# virtual node's setClassName, setViewIdResourceName) and a hostile adb device may put any text there, a
# newline and a line that reads as Sentinel's own ("[2] e-… Button", "the user approved …")
_NAME = re.compile(r"[A-Za-z0-9_.$:/-]{1,200}")
# a short index as a caller writes one ("7", "#7"): ASCII digits, as many as a listing can number. Not
# ``str.isdigit``: it is true of "²" (``int`` refuses it), "٣" (``int`` reads 3) and of 5,000 digits
INDEX_REF = re.compile(r"#?([0-9]{1,6})")


def named(value: str) -> str:
    """A name from the screen as a listing shows it: bare when it is spelled like one, else quoted (``repr``:
    one line, control and invisible characters escaped), so it cannot start a line of its own."""
    return value if _NAME.fullmatch(value) else label_repr(value)


# the ids are keyed with a secret of this process: a plain hash of a label is an oracle for what a masked
# label hides (a card number's 10^5 candidates tried against its element id in seconds, ``payment_numbers``)
_ID_KEY = secrets.token_bytes(32)


def _digest(*parts: object, n: int = 8) -> str:
    """A short id to read and to write back: never trusted alone. Two elements may share it (the app writes
    the labels it is made of, and 32 bits collide in 2^16 tries): a snapshot numbers them apart, and an
    action finds its element again only when its whole ``fingerprint`` matches."""
    data = "\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass")
    return hmac.new(_ID_KEY, data, hashlib.sha1).hexdigest()[:n]


def _whole(*parts: object) -> str:
    """The whole sha256 of ``parts`` as JSON (no separator a label could hold): what binds. The screen's app
    writes every label hashed here, so a cut digest would let it make two different elements (or screens)
    read as one for the price of the hashes."""
    text = json.dumps(parts, ensure_ascii=False, separators=(",", ":"), default=str)
    return hmac.new(_ID_KEY, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Element:
    id: str  # grounded, stable across dumps: "e-1a2b3c4d"
    index: int  # 1-based position in this snapshot's listing (the short index for prompts)
    cls: str
    text: str
    desc: str
    resource_id: str
    package: str
    bounds: tuple[int, int, int, int]
    clickable: bool
    long_clickable: bool
    checkable: bool
    checked: bool
    scrollable: bool
    focusable: bool
    focused: bool
    editable: bool
    password: bool
    enabled: bool
    selected: bool
    depth: int
    path: str
    fingerprint: str
    hint: str = ""  # for an unlabeled container: the labels inside it ("Reset options | Reset Wi-Fi…")
    seq: int = 0  # position in the dump's document order, counting every node (what is drawn over what)
    # the package of the window this element is drawn in (the top node of its tree, which Android itself
    # names): a node's own ``package`` is the screen's word, and a virtual node can claim any app
    window: str = ""
    # the apps whose nodes gave ``hint`` its labels (a node not listed itself, zero-sized or too deep, counts)
    hint_apps: tuple[str, ...] = ()
    # where what every node inside it says lies in its snapshot's ``said`` (a [start, end) range: its
    # descendants, in document order): ``Snapshot.inside`` reads it for the rating
    inner: tuple[int, int] = (0, 0)

    @property
    def center(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.bounds
        return (x1 + x2) // 2, (y1 + y2) // 2

    @property
    def short_class(self) -> str:
        return self.cls.rsplit(".", 1)[-1]

    @property
    def label(self) -> str:
        return (
            self.text
            or self.desc
            or self.hint.split(" | ")[0]
            or self.resource_id.rsplit("/", 1)[-1]
            or f"(unlabeled {self.short_class})"
        )

    def flags(self) -> list[str]:
        names = (
            "clickable",
            "long_clickable",
            "checkable",
            "checked",
            "scrollable",
            "editable",
            "password",
            "focused",
        )
        out = [n for n in names if getattr(self, n)]
        if not self.enabled:
            out.append("disabled")
        return out

    def line(self) -> str:
        parts = [f"[{self.index}] {self.id} {named(self.short_class)}"]
        if self.text:
            parts.append(f"text={label_repr(self.text)}")
        if self.desc:
            parts.append(f"desc={label_repr(self.desc)}")
        if self.resource_id:
            parts.append(f"res={named(self.resource_id.rsplit('/', 1)[-1])}")
        if self.hint:
            parts.append(f"contains={label_repr(self.hint)}")
        if not (self.text or self.desc or self.resource_id or self.hint):
            parts.append("(unlabeled)")
        parts.append(f"@{self.center[0]},{self.center[1]}")
        parts.extend(self.flags())
        return " ".join(parts)

    @property
    def shown(self) -> str:
        """The label as a message quotes it: cut, the cut said outside the quotes."""
        return label_repr(self.label)

    def public(self) -> dict[str, object]:
        """The element as structured content: every text of the screen cut (``screen_label``), and under
        ``cut`` the full length of each one that was."""
        said = {"class": self.cls, "text": self.text, "desc": self.desc, "resource_id": self.resource_id,
                "package": self.package, "hint": self.hint}
        out: dict[str, object] = {
            "id": self.id,
            "index": self.index,
            **{k: cut(v) for k, v in said.items() if k != "hint"},
            "bounds": list(self.bounds),
            "center": list(self.center),
            "flags": self.flags(),
            "hint": cut(self.hint),
            # the app whose window it is drawn in, as Android names it (``package`` is the node's own word)
            "window": cut(self.window),
        }
        lengths = {k: len(v) for k, v in said.items() if was_cut(v)}
        if lengths:
            out["cut"] = lengths
        return out


def _truthy(node: ET.Element, name: str) -> bool:
    return node.get(name, "false") == "true"


def parse_bounds(raw: str) -> tuple[int, int, int, int] | None:
    """A node's bounds; None when it has none. Any other spelling is no uiautomator dump (a hostile device):
    the dump is refused rather than the node dropped, since a dropped node that takes touches would let a
    tap through to what it covers."""
    if not raw:
        return None
    m = _BOUNDS.fullmatch(raw)
    values = tuple(int(v) for v in m.groups()) if m else ()
    if len(values) != 4 or not all(v in _INT32 for v in values):
        raise DumpFailed(f"a node's bounds are not [left,top][right,bottom] in int32s: {quoted(raw, 60)}")
    return values  # type: ignore[return-value]


def extract_xml(raw: str | bytes) -> str:
    """The ``<hierarchy>`` document out of dump output (drops the 'UI hierchary dumped to' trailer)."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    start = text.find("<hierarchy")
    end = text.rfind("</hierarchy>")
    if start < 0 or end < 0:
        snippet = text.strip().splitlines()[0][:120] if text.strip() else "empty output"
        raise DumpFailed(f"no UI hierarchy in the dump ({quoted(snippet)})")
    return text[start : end + len("</hierarchy>")]


@dataclass
class Snapshot:
    """One parsed screen: its elements, in document order, and its id."""

    snapshot_id: str
    elements: list[Element]
    package: str
    rotation: str = "0"
    truncated_depth: bool = False
    truncated_nodes: bool = False  # the dump had more than MAX_NODES nodes: the rest was not read
    # touch-handling nodes deeper than MAX_DEPTH (not listed, but drawn): (seq, bounds), for the hit test
    unlisted: list[tuple[int, tuple[int, int, int, int]]] = field(default_factory=list)
    by_id: dict[str, Element] = field(default_factory=dict)
    # what each node of the dump says of itself (``_said``), in document order: the ranges elements name
    said: list[str] = field(default_factory=list, repr=False)
    # what the nodes show a person, a text or a description each, in document order: a name that runs from
    # one into the next is matched over them (network_names.shows_name_across)
    texts: list[str] = field(default_factory=list, repr=False)
    _pages: list[tuple[int, int]] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.by_id = {e.id: e for e in self.elements}

    def find(self, ref: str) -> Element | None:
        """An element by grounded id ("e-…") or by its short index in this snapshot ("7" or "#7")."""
        ref = (ref or "").strip()
        index = INDEX_REF.fullmatch(ref)
        if index is not None:
            i = int(index.group(1))
            return self.elements[i - 1] if 1 <= i <= len(self.elements) else None
        return self.by_id.get(ref)

    def inside(self, e: Element) -> str:
        """Every label, content-desc and resource id inside ``e`` (what a tap on it can activate), joined by
        " | " in document order, read no further than one character past ``READ_LIMIT`` (longer is too long
        to read whole: label_window.py). Read on demand from one list per snapshot, so a deep dump's nesting
        does not multiply what a snapshot keeps."""
        parts: list[str] = []
        size = 0
        for k in range(*e.inner):
            part = self.said[k]
            if part:
                parts.append(part)
                size += len(part) + 3
                if size > READ_LIMIT + 3:
                    break
        joined = " | ".join(parts)
        return joined if len(joined) <= READ_LIMIT else joined[: READ_LIMIT + 1]

    def pages(self) -> list[tuple[int, int]]:
        """Each page's (start, end) in ``elements``: at most ``PAGE_SIZE`` elements and ``PAGE_BUDGET``
        characters of lines and structured content, at least one element. Worked out once per snapshot."""
        if self._pages is None:
            self._pages = []
            start, used = 0, 0
            for i, e in enumerate(self.elements):
                size = len(e.line()) + len(json.dumps(e.public()))
                if i > start and (i - start >= PAGE_SIZE or used + size > PAGE_BUDGET):
                    self._pages.append((start, i))
                    start, used = i, 0
                used += size
            self._pages.append((start, len(self.elements)))
        return self._pages

    def listing(self, page: int = 1) -> dict[str, object]:
        bounds = self.pages()
        pages = len(bounds)
        page = max(1, min(page, pages))
        chunk = self.elements[slice(*bounds[page - 1])]
        app = named(self.package) if self.package else "unknown app"
        header = f"snapshot {self.snapshot_id} · {app} · {len(self.elements)} elements · page {page}/{pages}"
        shown = [e.public() for e in chunk]
        lines = [header, *(e.line() for e in chunk)]
        if page < pages:
            lines.append(f"… more: call screen_read with page={page + 1}")
        labels_cut = sum(1 for e in shown if "cut" in e)
        if labels_cut:
            lines.append(f"({labels_cut} element(s) on this page have a text cut to its first "
                         f"{LABEL_LIMIT} characters)")
        if self.truncated_depth:
            lines.append(f"(nodes deeper than {MAX_DEPTH} levels were skipped)")
        if self.truncated_nodes:
            lines.append(f"(only the first {MAX_NODES} nodes were read: taps on this screen are refused)")
        return {
            "snapshot_id": self.snapshot_id,
            "package": self.package,
            "page": page,
            "pages": pages,
            "total": len(self.elements),
            "elements": shown,
            # what this answer does not show whole: labels cut on this page, the node and depth caps hit
            "cut": {"labels": labels_cut, "nodes": MAX_NODES if self.truncated_nodes else None,
                    "depth": MAX_DEPTH if self.truncated_depth else None},
            "text": "\n".join(lines),
        }


class ElementRegistry:
    """Builds snapshots from dumps and remembers recent ones, so actions can name (element, snapshot)."""

    def __init__(self, keep: int = 16) -> None:
        self._keep = keep
        self._snapshots: dict[str, Snapshot] = {}
        # told of every screen read (``screen_privacy``: what a call saw counts, whatever its result says)
        self.listeners: list[Callable[[Snapshot], None]] = []

    def build(self, dump: str | bytes) -> Snapshot:
        return self.remember(parse_dump(dump))

    def remember(self, snapshot: Snapshot) -> Snapshot:
        """Keep a snapshot parsed elsewhere (in a worker thread: ``Actuator.observe``)."""
        for listener in self.listeners:
            listener(snapshot)
        self._snapshots.pop(snapshot.snapshot_id, None)
        self._snapshots[snapshot.snapshot_id] = snapshot
        while len(self._snapshots) > self._keep:
            self._snapshots.pop(next(iter(self._snapshots)))
        return snapshot

    def get(self, snapshot_id: str) -> Snapshot | None:
        return self._snapshots.get(snapshot_id)

    @property
    def latest(self) -> Snapshot | None:
        return next(reversed(self._snapshots.values()), None) if self._snapshots else None


def _is_editable(node: ET.Element) -> bool:
    cls = node.get("class", "")
    return cls.endswith("EditText") or "AutoCompleteTextView" in cls or _truthy(node, "password")


def handles_touch(node: ET.Element) -> bool:
    """Whether a node takes a touch (``hit_test.touchable`` for an XML node): one that does not lets the touch
    through to what is drawn under it. The simulated phone dispatches taps by this too."""
    return _is_editable(node) or any(_truthy(node, f) for f in ("clickable", "long-clickable", "checkable"))


def _descendant_labels(node: ET.Element, limit: int = 3) -> tuple[list[str], tuple[str, ...]]:
    """The first labels inside ``node``, and the apps whose nodes say them."""
    labels: list[str] = []
    apps: set[str] = set()
    for d in node.iter():
        if d is node or _is_editable(d):
            continue
        label = d.get("text", "") or d.get("content-desc", "")
        if label and label not in labels:
            # whole: the rules read the row by these (one cut at 60 hid a "Pay now" after filler); what is
            # shown is cut where it is shown, and a label too long to read whole is asked (label_window)
            labels.append(label)
            apps.add(d.get("package", ""))
            if len(labels) >= limit:
                break
    return labels, tuple(sorted(apps))


def _inner_digests(root: ET.Element) -> dict[int, str]:
    """For each node (by ``id``), a digest of what every node inside it says, in order: its text (an editable
    field's left out, as in its id: what the user typed), content-desc and checked state, and the same of
    theirs. Built from the leaves up, each node's from its children's, so each label is hashed once: linear
    in the dump (itself bounded), whatever the nesting, and no character of it is left out."""
    out: dict[int, str] = {}
    for node in reversed(list(root.iter())):  # pre-order reversed: every child before its parent
        h = hashlib.sha256()  # whole: it stands in a fingerprint for every label inside
        for child in node:
            text = "" if _is_editable(child) else child.get("text", "")
            for part in (text, child.get("content-desc", ""), child.get("checked", ""), out[id(child)]):
                h.update(f"{len(part)}:".encode() + part.encode("utf-8", "surrogatepass"))
        out[id(node)] = h.hexdigest()
    return out


def _said(root: ET.Element) -> tuple[list[str], dict[int, tuple[int, int]], list[str]]:
    """What each node below ``root`` says of itself, in document order: its text (an editable field's left
    out: what the user typed), content-desc and resource id (its last part), " | "-joined; and for each node
    (by ``id``) the [start, end) range of its descendants in that list. Linear in the dump, whatever the
    nesting: every string is a node's own (nothing is copied per ancestor). And the texts and descriptions
    alone, in the same order."""
    nodes = list(root.iter())
    said: list[str] = []
    texts: list[str] = []
    for node in nodes:
        text = "" if _is_editable(node) else node.get("text", "")
        rid = node.get("resource-id", "").rsplit("/", 1)[-1]
        desc = node.get("content-desc", "")
        said.append(" | ".join(p for p in (text, desc, rid) if p))
        texts.extend(p for p in (text, desc) if p)
    position = {id(node): k for k, node in enumerate(nodes)}
    end: dict[int, int] = {}
    for k in range(len(nodes) - 1, -1, -1):  # pre-order reversed: every child before its parent
        children = list(nodes[k])
        end[id(nodes[k])] = end[id(children[-1])] if children else k + 1
    return said, {key: (k + 1, end[key]) for key, k in position.items()}, texts


def _read_tree(text: str) -> ET.Element:
    """The dump's tree, built no further than the walk reads it: the root and its first ``MAX_NODES + 1``
    nodes (one past the cap marks the screen as not read whole). A 4 MB dump can hold half a million bare
    nodes, a tree of ~120 MB that every unlabeled row's label search would walk to its end."""
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start",))
    root: ET.Element | None = None
    started = 0
    try:
        for i in range(0, len(text), _FEED):
            parser.feed(text[i : i + _FEED])
            for event in parser.read_events():
                element = event[-1] if isinstance(event, tuple) else None  # ("start", element)
                if root is None and isinstance(element, ET.Element):
                    root = element
                started += 1
            if root is not None and started > MAX_NODES + 1:  # the root, and one node past the cap: no more
                return root
        parser.close()
    except ET.ParseError as exc:
        raise DumpFailed(f"the UI dump is not valid XML: {exc}") from exc
    if root is None:
        raise DumpFailed("the UI dump is not valid XML: no root element")
    return root


def parse_dump(dump: str | bytes) -> Snapshot:
    if len(dump) > MAX_DUMP_BYTES:
        raise DumpFailed(f"the UI dump is {len(dump):,} bytes, more than {MAX_DUMP_BYTES:,}: refused")
    root = _read_tree(extract_xml(dump))
    inside = _inner_digests(root)
    said, ranges, texts = _said(root)
    kept: list[tuple[str, dict]] = []
    truncated = truncated_nodes = False
    unlisted: list[tuple[int, tuple[int, int, int, int]]] = []
    packages: dict[str, int] = {}
    # Iterative walk: (node, depth, parent path); deep trees cannot blow the Python stack.
    stack: list[tuple[ET.Element, int, str, str]] = [
        (child, 1, "", child.get("package", "")) for child in reversed(list(root))
    ]
    seq = 0
    while stack:
        node, depth, path, window = stack.pop()
        seq += 1
        if seq > MAX_NODES:
            truncated_nodes = True
            break
        if depth > MAX_DEPTH:  # not listed, but still drawn: a control down there can lie over a listed one
            truncated = True
            stack.extend((child, depth + 1, path, window) for child in reversed(list(node)))
            deep = parse_bounds(node.get("bounds", ""))
            if deep is not None and handles_touch(node):
                unlisted.append((seq, deep))
            continue
        cls = node.get("class", "")
        rid = node.get("resource-id", "")
        step = cls.rsplit(".", 1)[-1] + (f"#{rid.rsplit('/', 1)[-1]}" if rid else "")
        for child in reversed(list(node)):
            stack.append((child, depth + 1, f"{path}/{step}", window))
        bounds = parse_bounds(node.get("bounds", ""))
        if bounds is None or bounds[2] <= bounds[0] or bounds[3] <= bounds[1]:
            continue  # nothing to act on or show
        editable = _is_editable(node)
        interactive = editable or any(
            _truthy(node, f) for f in ("clickable", "long-clickable", "checkable", "scrollable", "focusable")
        )
        text, desc = node.get("text", ""), node.get("content-desc", "")
        if not (interactive or text or desc or rid):
            continue
        pkg = node.get("package", "")
        packages[pkg] = packages.get(pkg, 0) + 1
        # An unlabeled container (a list row) is told apart by its first labelled descendant.
        inner, inner_apps = ([], ()) if (text or desc) else _descendant_labels(node)
        key = (rid, cls, desc, "" if editable else text, inner[0] if inner else "", path)
        state = (bounds, "" if editable else text, desc, node.get("checked"), node.get("enabled"), cls,
                 inside[id(node)])
        kept.append(
            (
                _digest(*key),
                {
                    "cls": cls,
                    "text": text,
                    "desc": desc,
                    "resource_id": rid,
                    "package": pkg,
                    "bounds": bounds,
                    "clickable": _truthy(node, "clickable"),
                    "long_clickable": _truthy(node, "long-clickable"),
                    "checkable": _truthy(node, "checkable"),
                    "checked": _truthy(node, "checked"),
                    "scrollable": _truthy(node, "scrollable"),
                    "focusable": _truthy(node, "focusable"),
                    "focused": _truthy(node, "focused"),
                    "editable": editable,
                    "password": _truthy(node, "password"),
                    "enabled": node.get("enabled", "true") == "true",
                    "selected": _truthy(node, "selected"),
                    "depth": depth,
                    "path": path or "/",
                    # the id's own fields and where it is drawn too: an id that another element took (a
                    # short id collides) never passes for the element chosen
                    "fingerprint": _whole(key, state, window),
                    "hint": " | ".join(inner),
                    "hint_apps": inner_apps,
                    "inner": ranges[id(node)],
                    "seq": seq,
                    "window": window,
                },
            )
        )
    seen: dict[str, int] = {}
    elements: list[Element] = []
    for i, (base, attrs) in enumerate(kept, start=1):
        n = seen.get(base, 0)
        seen[base] = n + 1
        eid = f"e-{base}" if n == 0 else f"e-{base}.{n + 1}"
        elements.append(Element(id=eid, index=i, **attrs))
    package = max(packages, key=lambda p: packages[p]) if packages else ""
    # whole: a snapshot with the id of one read before replaces it in the registry, and "#7" would then be
    # found in the other screen (the app writes both, and 40 bits collide in 2^20 tries)
    snapshot_id = "s-" + _whole([[e.id, e.fingerprint, e.text] for e in elements])
    snapshot = Snapshot(snapshot_id, elements, package, root.get("rotation", "0"), truncated, truncated_nodes,
                        unlisted, said=said, texts=texts)
    snapshot.pages()  # here, in the parsing worker thread: for 5,000 long labels it takes a while
    return snapshot
