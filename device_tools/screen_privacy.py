"""Personal apps on the screen: what a screen tool shows of an app that holds personal data (Messages, the
contacts, the dialer, mail, photos, the notification shade) needs the caller's consent for that kind, as
``sms_list`` and ``contacts_search`` do.

The gateway asks and keeps the consents (``sentinel_mcp.gateway.consent_gate``); it tells this built-in, with
each call, which kinds the caller holds (``call_meta.CONSENTED_KEY``). A result of a screen tool (a listing,
an element, an action's fresh screen, a screenshot, OCR) that shows any element drawn by such an app, or in
its window, is withheld whole when a kind is missing: the texts, the snapshot id (a digest of them), the
element ids, the image. What the call read on the way counts as shown, whatever its result says: every screen
it dumped (a tap's fresh screen, rated and named in a refusal or a decision's context) and the snapshot the
caller named (its labels are echoed by a stale refusal). The caller learns which apps and kinds, and that
``personal=[kind]`` on a read tool asks the user. Behind the gateway a call without the key shows no personal
app (fail closed); standalone (no gateway), the device's own user sees everything.

The names of the networks and devices the phone knows (``network_names``: the Wi-Fi it is on, the saved ones,
the paired devices, its own) need ``nearby_devices`` wherever they show, whatever app or words are around
them: a screen or result holding one is withheld from a caller without it, and when the names cannot be read,
every Settings screen is (fail closed). A caller with the consent sees them (the result says it shows
``nearby_devices``); standalone, the phone's own user sees everything, unread.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from contextvars import ContextVar
from typing import Any

from mcp.types import CallToolResult, TextContent

from sentinel_mcp.core.call_meta import behind_gateway, consented_of

from .element_registry import ElementRegistry, Snapshot
from .errors import ScreenMoved
from .masked_results import masked
from .network_names import KnownNames, NetworkNames, shows_name, shows_name_across
from .notice_windows import SYSTEM_UI, shows_notices
from .payment_numbers import PAYMENT, holds_secret
from .read_off_names import shows_read_off
from .results import DECISION_META, snapshot_apps
from .window_list import Window

MAX_REQUESTED = 8
SCREEN_META = "sentinel/personal_screen"  # the tool's declaration the gateway reads (ConsentGate)
PERSONAL_SHOWN = "sentinel/personal_shown"  # a result's _meta: the kinds of personal data it shows
_SCANNED_KEYS = ("package", "window")
_LABELS = ("text", "desc", "hint")
_DECISION_KEPT = ("outcome", "decided_by", "provenance", "confirmation", "answer", "decision_id")
# the apps every screen read during the screen tool's call showed (None outside such a call)
_SEEN: ContextVar[set[str] | None] = ContextVar("sentinel_screen_seen", default=None)
NEARBY = "nearby_devices"
SETTINGS = "com.android.settings"
# what stands for an app in a refusal when a screen shows a known name, or Settings when they are unread
NAMES_SHOWN = "the Wi-Fi and Bluetooth names the phone knows"
NAMES_CROWDED = "the Wi-Fi networks in range (more than can be checked: a screen may show any of them)"
NAMES_UNREAD = "com.android.settings (the phone's Wi-Fi and Bluetooth names could not be read)"
# once a screen tool's call behind the gateway is done: (the folded names, or None: unread)
_NAMES: ContextVar[tuple[KnownNames | None] | None] = ContextVar("sentinel_screen_names", default=None)
# the screens a screen tool's call read and the text it read off pixels: checked for the names once it is done
# (a call refused before it reads the phone reads no names either)
_SCREENS: ContextVar[list[Snapshot] | None] = ContextVar("sentinel_screen_screens", default=None)
_TEXTS: ContextVar[list[str] | None] = ContextVar("sentinel_screen_texts", default=None)


class ScreenPrivacy:
    def __init__(self, apps: Mapping[str, str], registry: ElementRegistry,
                 names: NetworkNames | None = None) -> None:
        self.apps = dict(apps)
        self.names = names
        if names is not None:
            self.apps |= {NAMES_SHOWN: NEARBY, NAMES_UNREAD: NEARBY, NAMES_CROWDED: NEARBY}
        # a payment secret on any screen is masked, not withheld: the checkout page around it is the caller's
        self.kinds = sorted(set(self.apps.values()) | {PAYMENT})
        self.registry = registry
        registry.listeners.append(self._saw)

    def _saw(self, snapshot: Snapshot) -> None:
        seen, screens = _SEEN.get(), _SCREENS.get()
        if seen is not None:
            seen |= self._packages_in(snapshot)
        if screens is not None:
            screens.append(snapshot)

    @staticmethod
    @contextlib.contextmanager
    def unrecorded() -> Iterator[None]:
        """Screens read meanwhile do not count as shown: a read whose result never shows them (``wait_for``'s
        polls before the one it answers with, which its result names)."""
        tokens = _SEEN.set(None), _SCREENS.set(None)
        try:
            yield
        finally:
            _SEEN.reset(tokens[0])
            _SCREENS.reset(tokens[1])

    def declaration(self, argument: str | None = None) -> dict[str, Any]:
        """The tool ``_meta`` that tells the gateway to say which kinds the caller holds (and, for a read
        tool, which argument names the kinds the caller asks the user for)."""
        decl: dict[str, Any] = {"kinds": self.kinds, "once": [PAYMENT]}
        if argument:
            decl["argument"] = argument
        return {SCREEN_META: decl}

    def allowed(self, ctx: Any) -> frozenset[str] | None:
        """The kinds the caller may see (None: all). Standalone: all; behind the gateway: what it said."""
        if ctx is None or not behind_gateway(ctx):
            return None
        consented = consented_of(ctx)
        if consented is None:
            return None
        allowed = frozenset(consented)
        return None if allowed >= set(self.kinds) else allowed

    def hidden_in(self, packages: Iterable[str], allowed: frozenset[str] | None) -> dict[str, list[str]]:
        """kind -> the apps among ``packages`` whose kind is not allowed."""
        if allowed is None:
            return {}
        out: dict[str, set[str]] = {}
        for package in packages:
            kind = self.apps.get(package)
            if kind is not None and kind not in allowed:
                out.setdefault(kind, set()).add(package)
        return {kind: sorted(apps) for kind, apps in sorted(out.items())}

    def hidden_apps(self, snapshot: Snapshot, ctx: Any) -> list[str]:
        """The apps on ``snapshot`` whose kind the caller of ``ctx`` may not see."""
        hidden = self.hidden_in(self._packages_in(snapshot), self.allowed(ctx))
        return sorted({app for apps in hidden.values() for app in apps})

    def visible(self, package: str, window: str, allowed: frozenset[str] | None) -> bool:
        return not self.hidden_in((package, window), allowed)

    def unseen(self, ctx: Any, elements: Iterable[Any]) -> CallToolResult | None:
        """The refusal of an action on elements the caller may not read (None: it may): the device's question
        and result would name them and the words around them, and acting blind is no use to anyone."""
        hidden = self.hidden_in({p for e in elements for p in (e.package, e.window, e.resource_id)},
                                self.allowed(ctx))
        if not hidden:
            return None
        kinds, apps, said = _named(hidden)
        message = (
            f"Not done: the element is drawn by {said}; this caller has no consent to read it, so it does "
            f"not act on it either. Nothing was sent. Call screen_read with personal={kinds!r} to ask the "
            "user."
        )
        return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True,
                              structured_content={"status": "refused",
                                                  "withheld": {"kinds": kinds, "apps": apps}})

    def packages_of(self, value: Any) -> set[str]:
        """Every app a result's structured content shows: its ``package``/``window`` values and every element
        of the snapshots it names (``snapshot_id``, ``screens``). Walked whole: any shape counts."""
        found: set[str] = set()
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                shows = _labelled(item)
                for key, v in item.items():
                    if key == "resource_id" and isinstance(v, str) and v in self.apps:
                        found.add(v)  # a view only a personal screen has (personal_screens), labels or none
                    elif key in _SCANNED_KEYS and isinstance(v, str):
                        if shows:
                            found.add(v)
                    elif key in ("snapshot_id", "screens"):
                        for sid in v if isinstance(v, list) else [v]:
                            found |= self._snapshot_packages(sid)
                    else:
                        stack.append(v)
            elif isinstance(item, list):
                stack.extend(item)
        return found

    def _snapshot_packages(self, snapshot_id: Any) -> set[str]:
        snapshot = self.registry.get(snapshot_id) if isinstance(snapshot_id, str) else None
        return set() if snapshot is None else self._packages_in(snapshot)

    def _packages_in(self, snapshot: Snapshot) -> set[str]:
        # an unlabeled container's hint says its descendants' labels: their apps count (a node not listed);
        # a personal screen's own view (personal_screens) counts whatever it shows
        return {snapshot.package} | {p for e in snapshot.elements if e.text or e.desc or e.hint
                                     for p in (e.package, e.window, *e.hint_apps)} | {
            e.resource_id for e in snapshot.elements if e.resource_id in self.apps} | _names_in(snapshot)

    def shown(self, result: Any, allowed: frozenset[str] | None, seen: Iterable[str] = (),
              payment: bool = False) -> Any:
        """``result`` as the caller may see it: whole, or withheld whole when it shows a kind not allowed (or
        the call read a screen of one: ``seen``); its payment secrets masked unless ``payment_numbers`` is
        allowed (``payment``: a screen the call read shows one, so an image of it is not shown either)."""
        if not isinstance(result, CallToolResult):
            return result  # a question for the person (not the caller's data)
        packages = self.packages_of(result.structured_content) | set(seen)
        hidden = self.hidden_in(packages, allowed) if allowed is not None else {}
        if hidden:
            return withheld(result, hidden)
        if allowed is not None and PAYMENT not in allowed:
            return self.labelled(masked(result, payment), packages)  # (masked: it shows none of them)
        return self.labelled(result, packages, payment)

    def labelled(self, result: CallToolResult, packages: Iterable[str], payment: bool = False
                 ) -> CallToolResult:
        """``result`` with the kinds of personal data it shows said in ``_meta`` (``PERSONAL_SHOWN``): a
        caller that keeps what it saw (the phone agent's trace) keeps it only while the consent is held."""
        kinds = sorted({self.apps[p] for p in packages if p in self.apps} | ({PAYMENT} if payment else set()))
        if not kinds:
            return result
        return result.model_copy(update={"meta": {**(result.meta or {}), PERSONAL_SHOWN: kinds}})

    async def captured(self, ctx: Any, observe: Callable[[], Awaitable[Snapshot]],
                       capture: Callable[[], Awaitable[bytes]],
                       still: AbstractAsyncContextManager[Any] | None = None,
                       windows: Callable[[], Awaitable[list[Window]]] | None = None,
                       check: Callable[[Snapshot], str | None] | None = None,
                       ) -> tuple[bytes, list[str], list[str]]:
        """An image of the screen; (when the caller may not see every kind) the snapshots read just before
        and after it: the apps the image can show; and the apps whose windows the image shows, which any text
        read from it (OCR, a model looking at it) is marked as: the window manager's list before and after
        the capture (``windows``: another app's overlay is in the pixels, not in the dump), else the windows
        of the dumps around it. A screen that cannot be read refuses the image (``DeviceError``): which apps
        it shows cannot be told. ``still`` (the actuator's action lock) is held across the reads: no action
        (the caller's own, sent concurrently: open Messages, then go Home) changes the screen between the
        reads and the capture. A notice of the system UI's in either list (a heads-up, the shade:
        ``notice_windows``) counts as the notifications shown. ``check``: why a screen read around the capture
        is not the one the caller named (None: it is); the screens are then read whatever the caller may see,
        and a reason refuses the image (``ScreenMoved``)."""
        private = self.allowed(ctx) is not None
        dumped = private or windows is None or check is not None
        async with still or contextlib.nullcontext():
            before = await observe() if dumped else None
            shown = await windows() if windows is not None else []
            image = await capture()
            shown += await windows() if windows is not None else []
            after = await observe() if dumped else None
        # the window list's owners name the image's words, but do not count as shown for consent: the status
        # bar is a window of com.android.systemui (the notification shade's app) on every screen, and would
        # withhold every image from a caller without that consent; its notices do count
        if check is not None:
            for screen in (before, after):
                moved = check(screen) if screen is not None else "the screen was not read"
                if moved is not None:
                    raise ScreenMoved(moved)
        seen = _SEEN.get()
        if seen is not None and shows_notices(shown):
            seen.add(SYSTEM_UI)
        owners = [w.package for w in shown]
        apps = list(dict.fromkeys([*owners, *(a for s in (before, after) if s for a in snapshot_apps(s))]))
        ids = [before.snapshot_id, after.snapshot_id] if private and before and after else []
        return image, ids, apps

    def screen_tool(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Wrap a tool taking ``ctx``: its result passes ``shown`` for that call's caller."""
        if "ctx" not in inspect.signature(fn).parameters:
            raise TypeError(f"{fn.__name__}: a screen tool takes ctx (the caller's consents ride in it)")

        @functools.wraps(fn)
        async def tool(*args: Any, **kwargs: Any) -> Any:
            seen: set[str] = set()
            screens: list[Snapshot] = []
            texts: list[str] = []
            # every screen the call reads on the way counts as shown
            tokens = _SEEN.set(seen), _SCREENS.set(screens), _TEXTS.set(texts)
            try:
                result = fn(*args, **kwargs)
                if inspect.isawaitable(result):
                    result = await result
            finally:
                _SEEN.reset(tokens[0])
                _SCREENS.reset(tokens[1])
                _TEXTS.reset(tokens[2])
            ctx = kwargs.get("ctx")
            shows = screens or texts or kwargs.get("snapshot_id") or self.packages_of(
                getattr(result, "structured_content", None))
            names = _NAMES.set(await self._names_check(ctx) if shows else None)
            try:
                seen |= {p for s in screens for p in _names_in(s)} | _names_read_off(texts)
                # the caller's snapshot too: a stale refusal names its element as that snapshot had it
                seen |= self._snapshot_packages(kwargs.get("snapshot_id"))
                # (standalone the phone's own user sees them: nothing to mark)
                payment = ctx is not None and behind_gateway(ctx) and (
                    any(_shows_payment(s) for s in screens) or holds_secret(texts))
                return self.shown(result, self.allowed(ctx), seen, payment)
            finally:
                _NAMES.reset(names)

        return tool

    @staticmethod
    def read_off(*texts: str) -> None:
        """Text read off the screen's pixels (OCR) during a screen tool's call: a known name in it counts as
        shown, as in a screen's dump (Sentinel's own words in a result are not scanned: "Pressed Home")."""
        kept = _TEXTS.get()
        if kept is not None:
            kept.extend(t for t in texts if t)

    async def _names_check(self, ctx: Any) -> tuple[KnownNames | None] | None:
        """What a call behind the gateway checks its screens against (None: no check): without
        ``nearby_devices`` a name withholds the result, with it the result says it shows them
        (``PERSONAL_SHOWN``: a trace keeps it only while the consent holds). Standalone: no read."""
        if self.names is None or ctx is None or not behind_gateway(ctx) or consented_of(ctx) is None:
            return None
        return (await self.names.current(),)


def _names_in(snapshot: Snapshot) -> set[str]:
    """The stand-in for the names the phone knows when ``snapshot`` shows one (any label, hint or id of a
    node, listed or not), or is Settings' while they are unread, or is any screen while more networks are in
    range than are checked; nothing outside a check."""
    check = _NAMES.get()
    if check is None:
        return set()
    names = check[0]
    if names is None:
        packages = {snapshot.package, *(p for e in snapshot.elements for p in (e.package, e.window))}
        return {NAMES_UNREAD} if SETTINGS in packages else set()
    said = (*snapshot.said, *(v for e in snapshot.elements for v in (e.text, e.desc, e.hint, e.resource_id)))
    # one folded text of every label (a line each), searched once per name: a screen of a thousand nodes
    # against the most names costs a few milliseconds; then the labels as drawn, one after the next, for a
    # name an app draws over several ("Rosen", "thaler Hof Gast")
    crowded = set() if names.complete else {NAMES_CROWDED}
    shown = shows_name("\n".join(v for v in said if v), names) or shows_name_across(snapshot.texts, names)
    return crowded | ({NAMES_SHOWN} if shown else set())


def _shows_payment(snapshot: Snapshot) -> bool:
    return holds_secret([v for e in snapshot.elements for v in (e.text, e.desc, e.hint) if v])


def _names_read_off(texts: list[str]) -> set[str]:
    check = _NAMES.get()
    if check is None or check[0] is None or not texts:
        return set()
    crowded = set() if check[0].complete else {NAMES_CROWDED}
    return crowded | ({NAMES_SHOWN} if shows_read_off("\n".join(texts), check[0]) else set())


def _labelled(item: dict[str, Any]) -> bool:
    """Whether an element (a dict with labels) shows anything: a node with no text, description or inner
    labels (the system's navigation bar drawn over every app) shows no one's data. A dict without labels (the
    screen's own ``package``) counts."""
    labels = [item[k] for k in _LABELS if k in item]
    return not labels or any(isinstance(v, str) and v for v in labels) or any(
        not isinstance(v, str) for v in labels)


def _named(hidden: dict[str, list[str]]) -> tuple[list[str], list[str], str]:
    """(kinds, apps, "<apps>, which holds your <kinds>") of what a caller may not see."""
    kinds = list(hidden)
    apps = sorted({a for group in hidden.values() for a in group})
    words = " and ".join(k.replace("_", " ") for k in kinds)
    return kinds, apps, f"{', '.join(apps)}, which holds your {words}"


def withheld(result: CallToolResult, hidden: dict[str, list[str]]) -> CallToolResult:
    """What is left of a result that showed personal apps: its status, and which apps and kinds."""
    kinds, apps, said = _named(hidden)
    original = result.structured_content if isinstance(result.structured_content, dict) else {}
    status = original.get("status") if isinstance(original.get("status"), str) else None
    done = f"The action's status: {status}. " if status else ""
    text = (
        f"{done}Withheld: the phone's screen shows {said}; this caller has no consent to read it. "
        f"Call screen_read with personal={kinds!r} to ask the user."
    )
    structured: dict[str, Any] = {"status": status or "withheld",
                                  "withheld": {"kinds": kinds, "apps": apps}}
    decision = (result.meta or {}).get(DECISION_META)
    meta: dict[str, Any] | None = None
    if isinstance(decision, dict):  # the device's decision without the action (its labels, its digest)
        kept = {k: decision[k] for k in _DECISION_KEPT if k in decision}
        structured["decision"] = kept
        meta = {DECISION_META: kept}
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured,
                          is_error=result.is_error, _meta=meta)

