"""The screen tools: read, screenshot, and the grounded actions (click, type, scroll, ...)."""

from __future__ import annotations

import math
import re
from typing import Any, Literal

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations

from sentinel_mcp.core.builtin import SELF_CONFIRMS

from . import commands as C
from .actions import RISK_ORDER, ProposedAction
from .arg_shapes import MAX_COORD_PX, MAX_SWIPE_MS, coordinate, in_range
from .device_words import quoted
from .actuator import UNTRUSTED_KEY, ActionOutcome, StaleElement
from .element_registry import Element, Snapshot
from .errors import DeviceError
from .gate import Approval
from .hit_test import drag_receivers, tap_receivers
from .results import (DEVICE_OUTPUT, UNTRUSTED_META, error_result, outcome_result, read_result, screen_source,
                      snapshot_apps)
from .runtime import DeviceRuntime
from .rated_reading import read_target, reading
from .screenshot import to_image_content
from .text_input import check_typeable, input_text_chunks

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
ACT = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True)
NAVIGATE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
Result = CallToolResult | InputRequiredResult
MAX_FOUND = 20  # matching elements wait_for returns whole (it says how many matched)


async def finish(
    rt: DeviceRuntime, outcome: ActionOutcome | InputRequiredResult, *, with_screen: bool = True,
    apps: list[str] | None = None,
) -> Result:
    """Attach the screen as it is after a UI action (the model needs the new snapshot id). ``apps``: the apps
    whose labels the action quotes (its decision names the element, also when it was not done)."""
    if isinstance(outcome, InputRequiredResult):
        return outcome
    fresh = None
    if with_screen and outcome.status == "done" and outcome.snapshot is None:
        try:
            fresh = await rt.actuator.observe()
        except DeviceError:
            fresh = None
    return outcome_result(outcome, fresh, apps or ())


def register(mcp: MCPServer, rt: DeviceRuntime) -> None:
    act = rt.actuator
    screen = rt.privacy.screen_tool  # a personal app's screen only for a caller with that consent
    shows = rt.privacy.declaration()  # the gateway says, with each call, which consents its caller holds
    asks = rt.privacy.declaration("personal")  # ... and asks the user for the kinds named in `personal`

    async def on_element(
        ctx: Context,
        tool: str,
        kind: str,
        element_id: str,
        snapshot_id: str,
        plan,
        *,
        text: str | None = None,
    ) -> Result:
        """Resolve (element, snapshot) freshly, then run ``plan(element) -> (patterns, message)`` guarded."""
        mark = act.mark()  # before the screen is read: what goes out to the phone from here on moves it
        try:
            element, _fresh = await act.target(element_id, snapshot_id)
        except StaleElement as stale:
            return outcome_result(
                ActionOutcome(
                    "stale",
                    f"refused as stale: {stale.reason}. Nothing was sent; here is the fresh screen.",
                    snapshot=stale.fresh,
                )
            )
        except (ValueError, DeviceError) as exc:
            return error_result(str(exc))
        receivers = [element]
        apps = snapshot_apps(_fresh)  # every label quoted from here on is one of these apps'
        if kind in TAPPING:  # the device acts on what receives the touch: that is what is rated
            found = tap_receivers(_fresh, element)
            if isinstance(found, str):
                return error_result(found, apps=apps, element=element.public())
            receivers = found
            try:  # another app's window over it takes the tap, and the dump does not show it
                over = await act.covered(element)
            except DeviceError as exc:
                return error_result(str(exc), apps=apps)
            if over is not None:
                return error_result(over, apps=apps, element=element.public())
        unseen = rt.privacy.unseen(ctx, [element, *receivers])
        if unseen is not None:  # acting on what the caller may not read: its labels, the question's words
            return unseen
        try:
            patterns, message = plan(element)
        except (ValueError, DeviceError) as exc:
            return error_result(str(exc), apps=apps, element=element.public())
        # a label and the row it is in, each as its own app says and as the screen's app: the riskiest
        action = await riskiest(kind, tool, receivers, _fresh, text)
        tapped = receivers[-1].id if kind in TAPPING else None
        ids = [r.id for r in receivers]
        rated = (reading(_fresh, ids), lambda now: reading(now, ids))  # what the person is asked about

        async def run(approval: Approval) -> dict[str, Any]:
            if approval.decided_by.startswith("user"):
                # the screen may have changed while the user decided (the element, or what lies over it)
                await act.recheck(element, tapped=tapped, rated=rated)
            elif (moved := act.moved_since(mark)) is not None:  # ... or while it was rated or waited its turn
                await act.recheck(element, tapped=tapped, rated=rated, waiting=moved)
            elif _fresh.snapshot_id != snapshot_id:
                # the screen changed by itself since the caller read it (nothing of Sentinel's went out): it
                # may change again before the send, so it is read once more, right before it; a screen that
                # stood still costs no second read
                await act.recheck(element, tapped=tapped, rated=rated, waiting=BY_ITSELF)
            for i, argv in enumerate(patterns):
                await rt.gate.run(argv, approval)
                if i == 0 and kind in KEYED:  # the keys after this tap go to the focus: the field's only
                    await act.has_focus(element)
            return {"message": message, "element": element.public()}

        context = f"screen of {element.window or element.package}"
        withheld = rt.privacy.hidden_apps(_fresh, ctx)  # its question says nothing of them to this caller
        return await finish(rt, await act.guarded(ctx, action, patterns, run, context=context,
                                                  withheld=withheld), apps=apps)

    async def riskiest(kind: str, tool: str, elements: list[Element], screen: Snapshot,
                       text: str | None) -> ProposedAction:
        """The action on each element, rated with the element's own package, the package of the window it is
        drawn in and the screen's app (a node's ``package`` attribute is the screen's word, and may name a
        harmless app or none), and with what the screen says around it: the riskiest."""
        options = []
        for e in elements:
            read = read_target(screen, e)  # once per element: the screen says the same whichever app rates it
            options += [
                ProposedAction(kind=kind, tool=tool, text=text, package=app,
                               target=read.model_copy(update={"package": app}))
                for app in dict.fromkeys(p for p in (e.package, e.window, screen.package) if p) or [""]
            ]
        return await riskiest_of(options)

    async def riskiest_of(options: list[ProposedAction]) -> ProposedAction:
        if len(options) == 1:
            return options[0]
        rated = [(RISK_ORDER[(await act.classifier.assess(o)).risk], i, o) for i, o in enumerate(options)]
        return max(rated, key=lambda r: (r[0], -r[1]))[2]

    async def simple(
        ctx: Context, tool: str, kind: str, argv: list[str], message: str, **fields: Any
    ) -> Result:
        action = ProposedAction(kind=kind, tool=tool, **fields)

        async def run(approval: Approval) -> dict[str, Any]:
            output = await rt.gate.run(argv, approval)
            return {"message": message, "output": output.strip()[:2000], UNTRUSTED_KEY: DEVICE_OUTPUT}

        return await finish(rt, await act.guarded(ctx, action, [argv], run))

    @mcp.tool(annotations=READ, meta=asks)
    @screen
    async def screen_read(ctx: Context, page: int = 1, personal: list[str] | None = None) -> CallToolResult:
        """Read the current screen: interactive and labelled elements with grounded ids, at most 60 per page.
        Use an element's id (or its [index]) together with the snapshot_id in click/type_text/...
        A screen of an app holding personal data (messages, contacts, ...) is withheld without the user's
        consent for that kind: name the kinds in `personal` (e.g. ["messages"]) to ask the user."""
        try:
            snapshot = await act.observe()
        except DeviceError as exc:
            return error_result(str(exc))
        listing = snapshot.listing(page=page)
        data = {k: v for k, v in listing.items() if k != "text"}
        return read_result(str(listing["text"]), data, untrusted=screen_source(snapshot_apps(snapshot)))

    @mcp.tool(annotations=READ, meta=asks)
    @screen
    def element_info(snapshot_id: str, element_id: str, ctx: Context,
                     personal: list[str] | None = None) -> CallToolResult:
        """One element of a remembered snapshot (no device access): class, labels, package, flags.
        Policies use it to learn, e.g., whether type_text targets a password field."""
        snapshot = act.registry.get(snapshot_id)
        found = snapshot.find(element_id) if snapshot else None
        if found is None:
            return error_result(f"no element {element_id!r} in snapshot {snapshot_id!r}; call screen_read")
        data = found.public() | {
            "snapshot_id": snapshot_id,
            "password": found.password,
            "editable": found.editable,
        }
        return read_result(found.line(), data, untrusted=screen_source([found.window or found.package]))

    @mcp.tool(annotations=READ, meta=asks)
    @screen
    async def screenshot(ctx: Context, personal: list[str] | None = None) -> CallToolResult:
        """A screenshot of the phone, downscaled to at most 1280 px on its longest side (withheld, as
        screen_read, while an app holding personal data is on screen: `personal` asks the user)."""
        try:
            png, screens, apps = await rt.privacy.captured(
                ctx, act.observe, lambda: rt.gate.read_bytes(C.SCREENCAP), act.acting, act.visible_windows)
            image, info = await anyio.to_thread.run_sync(to_image_content, png)  # off the event loop
        except DeviceError as exc:
            return error_result(str(exc))
        shown: dict[str, Any] = {**info, "screens": screens} if screens else dict(info)
        return CallToolResult(
            content=[image, TextContent(type="text", text=f"screenshot {info['width']}x{info['height']}")],
            structured_content=shown,
            _meta={UNTRUSTED_META: screen_source(apps)},  # the pixels are the apps' words, read by a model
        )

    @mcp.tool(annotations=ACT, meta={**SELF_CONFIRMS, **shows})
    @screen
    async def click(element_id: str, snapshot_id: str, ctx: Context) -> Result:
        """Tap an element named by its id (or [index]) in a snapshot from screen_read."""
        return await on_element(
            ctx,
            "click",
            "click",
            element_id,
            snapshot_id,
            lambda e: ([C.tap(*e.center)], f"tapped {e.shown}"),
        )

    @mcp.tool(annotations=ACT, meta={**SELF_CONFIRMS, **shows})
    @screen
    async def long_click(element_id: str, snapshot_id: str, ctx: Context) -> Result:
        """Long-press an element (id or [index] from a snapshot)."""
        return await on_element(
            ctx,
            "long_click",
            "long_click",
            element_id,
            snapshot_id,
            lambda e: ([C.long_press(*e.center)], f"long-pressed {e.shown}"),
        )

    def typing_plan(text: str, clear_first: bool):
        def plan(e: Element) -> tuple[list[list[str]], str]:
            if not e.editable:
                raise ValueError(f"element {e.id} ({e.shown}) is not a text field")
            check_typeable(text, unicode_ok=rt.gate.unicode_text)
            argvs = [C.tap(*e.center)]
            if clear_first and e.text:
                argvs += [
                    C.keyevent("KEYCODE_MOVE_END"),
                    C.keyevent(*["KEYCODE_DEL"] * min(len(e.text), 500)),
                ]
            argvs += [C.input_text(chunk) for chunk in input_text_chunks(text)]
            return argvs, f"typed {len(text)} characters into {e.shown}"

        return plan

    # the text may be a password (or a card number, a code): the gateway's audit never stores it in clear
    @mcp.tool(annotations=ACT, meta={**SELF_CONFIRMS, **shows, "sentinel/sensitive": ["text"]})
    @screen
    async def type_text(
        element_id: str, snapshot_id: str, text: str, ctx: Context, clear_first: bool = False
    ) -> Result:
        """Type text into a text field (id or [index] from a snapshot). ASCII only on adb."""
        return await on_element(
            ctx, "type_text", "type", element_id, snapshot_id, typing_plan(text, clear_first), text=text
        )

    @mcp.tool(annotations=ACT, meta={**SELF_CONFIRMS, **shows})
    @screen
    async def clear_text(element_id: str, snapshot_id: str, ctx: Context) -> Result:
        """Delete the text in a text field."""

        def plan(e: Element) -> tuple[list[list[str]], str]:
            if not e.editable:
                raise ValueError(f"element {e.id} ({e.shown}) is not a text field")
            n = min(max(len(e.text), 1), 500)
            return [
                C.tap(*e.center),
                C.keyevent("KEYCODE_MOVE_END"),
                C.keyevent(*["KEYCODE_DEL"] * n),
            ], f"cleared {e.shown}"

        return await on_element(ctx, "clear_text", "clear", element_id, snapshot_id, plan)

    @mcp.tool(annotations=NAVIGATE, meta={**SELF_CONFIRMS, **shows})
    @screen
    async def scroll(
        direction: Literal["up", "down", "left", "right"],
        ctx: Context,
        element_id: str | None = None,
        snapshot_id: str | None = None,
    ) -> Result:
        """Scroll the screen, or one scrollable element, to reveal content further up/down/left/right."""
        subject: Element | None = None
        seen: Snapshot | None = None
        mark = act.mark()  # before the screen is read (``moved_since``)
        try:
            if element_id is not None:
                subject, screen = await act.target(element_id, snapshot_id or "")
                if not subject.scrollable:  # a swipe inside a button's bounds is a press on it, not a scroll
                    return error_result(
                        f"element {subject.id} ({subject.shown}) does not scroll: scroll the screen, or an "
                        "element marked scrollable", apps=snapshot_apps(screen), element=subject.public())
                bounds = subject.bounds
            else:
                width, height = await _screen_size(rt)
                seen = act.registry.latest  # the screen the caller last saw (``differs_from_seen``)
                screen, bounds = await act.observe(), (0, 0, width, height)
        except StaleElement as stale:
            return outcome_result(ActionOutcome(
                "stale", f"refused as stale: {stale.reason}. Nothing was sent; here is the fresh screen.",
                snapshot=stale.fresh))
        except (DeviceError, ValueError) as exc:
            return error_result(str(exc))
        argv = scroll_swipe(bounds, direction)
        x1, y1, x2, y2 = (int(v) for v in argv[2:6])
        if math.hypot(x2 - x1, y2 - y1) < MIN_SWIPE_PX:  # a swipe that short is a press where it lies
            what = f"element {subject.id}" if subject is not None else "the screen"
            return error_result(
                f"{what} is too small to scroll (a swipe over it would move under {MIN_SWIPE_PX} px: a "
                "press). Nothing was sent"
            )
        where = f" in {subject.shown}" if subject is not None else ""
        # a screen that differs from the one the caller chose on changes by itself: read again before the send
        if subject is not None:
            moving = BY_ITSELF if screen.snapshot_id != snapshot_id else None
        else:
            moving = differs_from_seen(seen, screen)
        return await drag(ctx, "scroll", argv, screen, f"scrolled {direction}{where}", subject, mark, moving)

    @mcp.tool(annotations=NAVIGATE, meta={**SELF_CONFIRMS, **shows})
    @screen
    async def swipe(x1: int, y1: int, x2: int, y2: int, ctx: Context, duration_ms: int = 300) -> Result:
        """Swipe between two screen points (pixels)."""
        # arg_shapes.py, mirrored by device.pl's guard of device__swipe
        if not (all(coordinate(v) for v in (x1, y1, x2, y2)) and in_range(duration_ms, 1, MAX_SWIPE_MS)):
            return error_result(f"coordinates must be in 0..{MAX_COORD_PX} (integers) and duration_ms in "
                                f"1..{MAX_SWIPE_MS}")
        if math.hypot(x2 - x1, y2 - y1) < MIN_SWIPE_PX:
            return error_result(
                f"a swipe that moves less than {MIN_SWIPE_PX} px is a tap or a long press: use click or "
                "long_click on the element (they ask first when it is risky)")
        argv = C.swipe(x1, y1, x2, y2, duration_ms)
        mark = act.mark()  # before the screen is read (``moved_since``)
        seen = act.registry.latest  # the screen the caller last saw (``differs_from_seen``)
        try:
            screen = await act.observe()
        except (DeviceError, ValueError) as exc:
            return error_result(str(exc))
        return await drag(ctx, "swipe", argv, screen, "swiped", None, mark, differs_from_seen(seen, screen))

    async def drag(ctx: Context, tool: str, argv: list[str], screen: Snapshot, message: str,
                   subject: Element | None, mark: tuple[int, int], moving: str | None = None) -> Result:
        """A swipe (``argv``: ``input swipe x1 y1 x2 y2 ms``) judged by what its finger presses and lifts from
        on ``screen`` (a "slide to pay" control, a button a short drag still presses: the riskiest of them),
        and, for a scroll of one element, by that element too. ``moving``: why the screen may change by itself
        before the send (it is read once more right before it)."""
        points = ((int(argv[2]), int(argv[3])), (int(argv[4]), int(argv[5])))
        apps = snapshot_apps(screen)  # the labels this swipe's answer quotes are these apps'
        pressed = drag_receivers(screen, points)
        if isinstance(pressed, str):
            return error_result(pressed, apps=apps)
        # the app each point is meant for: the scrolled element's, or the one the dump shows there
        app = subject.window if subject is not None else (lambda x, y: window_at(screen, x, y))
        try:  # another app's window under the finger takes the swipe, and the dump does not show it
            over = await act.covered_at(app, points, "a point the swipe presses or lifts at")
        except DeviceError as exc:
            return error_result(str(exc), apps=apps)
        if over is not None:
            return error_result(over, apps=apps)
        unseen = rt.privacy.unseen(ctx, [*pressed, *([subject] if subject else [])])
        if unseen is not None:
            return unseen
        kind = "scroll" if tool == "scroll" else "swipe"
        options = [await riskiest("click", tool, pressed, screen, None)] if pressed else []
        if subject is not None:
            options.append(await riskiest(kind, tool, [subject], screen, None))
        # a swipe that presses nothing is rated as a bare swipe, and is read again like any other when the
        # phone moved meanwhile: the same points may lie on a "Pay" button of the screen up by then
        action = await riskiest_of(options) if options else ProposedAction(kind=kind, tool=tool)
        ids = sorted(e.id for e in pressed)
        named = {e.id: e for e in (*pressed, *([subject] if subject else []))}
        read = reading(screen, list(named))  # what the person is asked about (rated_reading)
        element = named[action.target.id] if action.target and action.target.id in named else None

        async def run(approval: Approval) -> dict[str, Any]:
            # the screen may have changed while the user decided, while the model rated the swipe or while it
            # waited behind another action: the same elements under the finger
            waiting = "while waiting for confirmation" if approval.decided_by.startswith("user") else \
                act.moved_since(mark) or moving
            if waiting is not None:
                fresh = await act.observe()  # one read: the scrolled element and what lies under the finger
                kept = fresh.by_id.get(subject.id) if subject is not None else None
                if subject is not None and (kept is None or kept.fingerprint != subject.fingerprint):
                    raise StaleElement(f"element {subject.id} ({subject.shown}) changed {waiting}", fresh)
                now = drag_receivers(fresh, points)
                if (isinstance(now, str) or sorted(e.id for e in now) != ids
                        or reading(fresh, list(named)) != read):
                    raise StaleElement(f"{waiting}, what lies under the swipe changed", fresh)
                moved = await act.covered_at(app, points, "a point the swipe presses or lifts at")
                if moved is not None:
                    raise StaleElement(f"{waiting}, {moved.removeprefix('refused: ')}", fresh)
            output = await rt.gate.run(argv, approval)
            said = f"{message} (from {element.shown})" if element is not None and pressed else message
            return {"message": said, "output": output.strip()[:2000], UNTRUSTED_KEY: DEVICE_OUTPUT}

        context = f"screen of {element.window or element.package}" if element is not None else ""
        withheld = rt.privacy.hidden_apps(screen, ctx)  # its question says nothing of them to this caller
        return await finish(rt, await act.guarded(ctx, action, [argv], run, context=context,
                                                  withheld=withheld), apps=apps)

    @mcp.tool(annotations=NAVIGATE, meta={**SELF_CONFIRMS, **shows})
    @screen
    async def press_back(ctx: Context) -> Result:
        """Press the Back button."""
        return await simple(ctx, "press_back", "back", C.keyevent("KEYCODE_BACK"), "pressed Back")

    @mcp.tool(annotations=NAVIGATE, meta={**SELF_CONFIRMS, **shows})
    @screen
    async def press_home(ctx: Context) -> Result:
        """Go to the home screen."""
        return await simple(ctx, "press_home", "home", C.keyevent("KEYCODE_HOME"), "pressed Home")

    @mcp.tool(annotations=NAVIGATE, meta={**SELF_CONFIRMS, **shows})
    @screen
    async def show_recents(ctx: Context) -> Result:
        """Show the recent apps."""
        return await simple(
            ctx, "show_recents", "recents", C.keyevent("KEYCODE_APP_SWITCH"), "opened Recents"
        )

    @mcp.tool(annotations=ACT, meta={**SELF_CONFIRMS, **shows})
    @screen
    async def open_app(package: str, ctx: Context) -> Result:
        """Launch an app by package name (e.g. com.android.settings)."""
        try:
            argv = C.launch_app(package)
        except ValueError as exc:
            return error_result(str(exc))
        action = ProposedAction(kind="open_app", tool="open_app", package=package)

        async def run(approval: Approval) -> dict[str, Any]:
            output = await rt.gate.run(argv, approval)
            if "No activities found" in output or "monkey aborted" in output:
                raise DeviceError(
                    f"no app {package!r} to open on this phone (monkey: {quoted(output)})"
                )
            return {"message": f"opened {package}", "output": output.strip()[:2000],
                    UNTRUSTED_KEY: DEVICE_OUTPUT}

        return await finish(rt, await act.guarded(ctx, action, [argv], run))

    @mcp.tool(annotations=READ, meta=asks)
    @screen
    async def wait_for(
        text: str, ctx: Context, timeout_s: float = 10.0, personal: list[str] | None = None
    ) -> CallToolResult:
        """Wait until an element whose text, description or resource id contains `text` is on screen (an
        app holding personal data counts only with the user's consent: `personal`, as screen_read)."""
        allowed = rt.privacy.allowed(ctx)
        needle = text.strip().lower()
        if not needle:
            return error_result("text must not be empty")
        timeout_s = max(0.0, min(timeout_s, 60.0))
        deadline = anyio.current_time() + timeout_s
        while True:
            try:
                with rt.privacy.unrecorded():  # a poll counts only as the one answered with (its snapshot_id)
                    snapshot = await act.observe()
            except DeviceError as exc:
                return error_result(str(exc))
            # what the caller may not see is not searched either (how soon an answer came would tell)
            hits = [e for e in snapshot.elements if needle in f"{e.text}\n{e.desc}\n{e.resource_id}".lower()
                    and rt.privacy.visible(e.package, e.window, allowed)]
            if hits:
                listing = snapshot.listing()
                return read_result(
                    f"found {len(hits)} element(s) matching {text!r}\n\n{listing['text']}",
                    # the first hits only: a hostile screen can match thousands of nodes
                    {"found": [e.public() for e in hits[:MAX_FOUND]], "found_total": len(hits),
                     "snapshot_id": snapshot.snapshot_id},
                    untrusted=screen_source(snapshot_apps(snapshot)),
                )
            if anyio.current_time() >= deadline:
                return error_result(
                    f"no element matching {text!r} appeared within {timeout_s:g}s",
                    snapshot_id=snapshot.snapshot_id,
                )
            await anyio.sleep(0.5)

    @mcp.tool(annotations=READ)
    async def device_info() -> CallToolResult:
        """Which device and backend this server drives, and whether confirmations are physical."""
        try:
            info = await rt.gate.describe()
        except DeviceError as exc:
            return error_result(str(exc))
        info = {**info, "physical_confirmation": str(rt.settings.physical_confirmation)}
        # the model's name is the phone's (getprop: a ROM sets it to what it likes), one escaped line
        return read_result("\n".join(f"{k}: {v}" for k, v in info.items()), info,
                           untrusted="the phone's system properties")


def window_at(screen: Snapshot, x: int, y: int) -> str:
    """The app whose window the dump shows at (x, y): the topmost element there (drawn last, listed last),
    else the screen's app. Never a count of elements: another window's many nodes would not move it."""
    for e in reversed(screen.elements):
        x1, y1, x2, y2 = e.bounds
        if e.window and x1 <= x < x2 and y1 <= y < y2:
            return e.window
    return screen.package


def differs_from_seen(seen: Snapshot | None, screen: Snapshot) -> str | None:
    """Whether a gesture given by screen points (naming no snapshot) falls on a screen that changes by itself:
    its own read differs from the last screen read before it (what the caller chose its points on), or no
    screen was read before it. Such a screen may change again before the send, so it is read once more right
    before it; a screen that stood still costs no second read."""
    if seen is None:
        return "on a screen not read before (it may change by itself)"
    return BY_ITSELF_SEEN if seen.snapshot_id != screen.snapshot_id else None


BY_ITSELF = "on a screen that changes by itself (it differed from the snapshot named)"
BY_ITSELF_SEEN = "on a screen that changes by itself (it differed from the screen last read)"
TAPPING = ("click", "long_click", "type", "clear")  # kinds whose commands tap the target's centre
KEYED = ("type", "clear")  # kinds whose tap focuses a field, then send keys to the focus
MIN_SCREEN_PX = 120  # the smallest Android screens (watches) are 240 px wide; a scroll over one moves 60 %
MIN_SWIPE_PX = 48  # Android's touch slop is 8 dp (24 px at 3x): a shorter movement is a tap or a long press


def scroll_swipe(bounds: tuple[int, int, int, int], direction: str) -> list[str]:
    """A swipe over the middle 60 % of ``bounds``; "down" reveals what is below (the finger moves up)."""
    x1, y1, x2, y2 = bounds
    cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
    dx, dy = (x2 - x1) * 3 // 10, (y2 - y1) * 3 // 10
    moves = {
        "down": (cx, cy + dy, cx, cy - dy),
        "up": (cx, cy - dy, cx, cy + dy),
        "right": (cx + dx, cy, cx - dx, cy),
        "left": (cx - dx, cy, cx + dx, cy),
    }
    return C.swipe(*moves[direction], 300)


async def _screen_size(rt: DeviceRuntime) -> tuple[int, int]:
    """``wm size``: the override size wins over the physical one (what input coordinates use)."""
    # the phone's answer: ASCII digits only (\d takes any script's, and int() reads them), a screen's few
    answer = await rt.gate.read(C.WINDOW_SIZE)
    sizes = dict(re.findall(r"(Physical|Override) size: ([0-9]{1,6}x[0-9]{1,6})\b", answer))
    size = sizes.get("Override") or sizes.get("Physical")
    if size is None:
        raise ValueError("could not read the screen size (wm size)")
    width, height = (int(v) for v in size.split("x"))
    if not (MIN_SCREEN_PX <= width <= MAX_COORD_PX and MIN_SCREEN_PX <= height <= MAX_COORD_PX):
        raise ValueError(f"the phone gave a screen size of {size} (wm size): no screen is that size")
    return width, height
