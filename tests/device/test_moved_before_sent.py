"""A tap goes where the element is when it is sent, not where it was when it was read. An action that asks
nothing was checked against the screen once, before its rating; the rating may take long (the model asked,
`rules+model`: tens of seconds) and the action may wait its turn behind another caller's, and meanwhile
another action moved the phone (another app brought to the front). Only a confirmed action was checked again,
so the tap went out at the old element's centre on whatever screen was up then. Now an action whose rating
asked the model, or after which another action was sent to the phone, reads the screen again inside its turn
and is refused as stale when its element moved, changed or left. Real gateway, simulated phone, two
callers; the rating is held (a model that has not answered yet) until the test lets it go: event order,
no timing."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from tests.device.device_helpers import Answers, element, snapshot_id
from tests.device.test_through_gateway import device_config

pytestmark = pytest.mark.timeout(120)


class HeldRating:
    """The device's classifier, its first rating held until ``go`` is set (a model that takes its time)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.entered, self.go = inner, anyio.Event(), anyio.Event()
        self.calls = 0
        self.held = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def assess(self, action: Any, context: str = "") -> Any:
        if not self.held:
            self.held = True
            self.calls += 1  # the model was asked
            self.entered.set()
            await self.go.wait()
        return await self.inner.assess(action, context)


@contextlib.asynccontextmanager
async def gateway(tmp_path: Any) -> AsyncIterator[Any]:
    """The gateway, its caller holding the nearby_devices consent: Settings' home names the Wi-Fi the phone
    is on ("Connected to Home"), which these tests of staleness read as any screen."""
    async with running_gateway(device_config(tmp_path)) as rt:
        rt.gateway.consent_gate.book.grant("owner", "nearby_devices", by="cli")
        yield rt


def _taps(phone: Any) -> list[list[str]]:
    return [c for c in phone.commands if c[:2] == ["input", "tap"]]


@pytest.mark.parametrize("meanwhile", ["another caller's action", "the model's rating only"])
async def test_a_tap_rated_while_the_phone_moved_is_refused_as_stale(tmp_path, meanwhile) -> None:
    async with gateway(tmp_path) as rt:
        runtime = rt.gateway.manager.upstreams["device"].target.server.runtime
        phone, held = runtime.backend, HeldRating(runtime.actuator.classifier)
        runtime.actuator.classifier = held
        async with Client(rt.front.server, elicitation_callback=Answers()) as a, \
                Client(rt.front.server, elicitation_callback=Answers()) as b:
            home = await a.call_tool("device__screen_read", {})
            messages = element(home, text="Messages")
            results: list[Any] = []

            async def tap_messages() -> None:
                results.append(await a.call_tool("device__click", {"element_id": messages["id"],
                                                                   "snapshot_id": snapshot_id(home)}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(tap_messages)
                await held.entered.wait()  # the tap is being rated
                if meanwhile == "another caller's action":
                    opened = await b.call_tool("device__open_app", {"package": "com.android.settings"})
                    assert not opened.is_error, opened.content[0].text
                else:  # the person opens Settings on the phone themselves: no command of Sentinel's
                    phone._go("settings")
                assert phone.screen == "settings"
                taps_before = len(_taps(phone))
                held.go.set()
            r = results[0]
            text = r.content[0].text
            assert r.is_error and "refused as stale" in text and "Nothing was sent" in text, text
            assert len(_taps(phone)) == taps_before and phone.screen == "settings", phone.commands[-3:]
            # the allowed path beside it: read again, the same tap on what is there now goes out
            fresh = await a.call_tool("device__screen_read", {})
            search = element(fresh, desc="Search settings")
            r = await a.call_tool("device__click",
                                  {"element_id": search["id"], "snapshot_id": snapshot_id(fresh)})
            assert not r.is_error, r.content[0].text
            assert len(_taps(phone)) == taps_before + 1


async def test_a_tap_nothing_moved_under_is_sent_with_one_read(tmp_path) -> None:
    """The common case costs no second read: rules alone, no other action meanwhile."""
    async with gateway(tmp_path) as rt:
        phone = rt.gateway.manager.upstreams["device"].target.server.runtime.backend
        async with Client(rt.front.server, elicitation_callback=Answers()) as a:
            home = await a.call_tool("device__screen_read", {})
            dumps = sum(1 for c in phone.commands if "uiautomator" in " ".join(c))
            r = await a.call_tool("device__click", {"element_id": element(home, text="Messages")["id"],
                                                    "snapshot_id": snapshot_id(home)})
            assert not r.is_error, r.content[0].text
            assert phone.screen == "messages_list"
            # the target's read and the fresh screen returned with the result: two, not three
            assert sum(1 for c in phone.commands if "uiautomator" in " ".join(c)) - dumps == 2


async def test_a_swipe_rated_while_another_app_came_up_is_refused_as_stale(tmp_path) -> None:
    """The same for a swipe that starts on a control (rated as pressing it): what lies under the finger is
    read again once another action went out."""
    async with gateway(tmp_path) as rt:
        runtime = rt.gateway.manager.upstreams["device"].target.server.runtime
        phone, held = runtime.backend, HeldRating(runtime.actuator.classifier)
        runtime.actuator.classifier = held
        async with Client(rt.front.server, elicitation_callback=Answers()) as a, \
                Client(rt.front.server, elicitation_callback=Answers()) as b:
            results: list[Any] = []

            async def swipe_from_messages() -> None:  # from the Messages icon upwards
                swipe = {"x1": 162, "y1": 1630, "x2": 162, "y2": 900}
                results.append(await a.call_tool("device__swipe", swipe))

            async with anyio.create_task_group() as tg:
                tg.start_soon(swipe_from_messages)
                await held.entered.wait()
                opened = await b.call_tool("device__open_app", {"package": "com.android.settings"})
                assert not opened.is_error, opened.content[0].text
                swipes_before = sum(1 for c in phone.commands if c[:2] == ["input", "swipe"])
                held.go.set()
            text = results[0].content[0].text
            assert results[0].is_error and "refused as stale" in text, text
            assert sum(1 for c in phone.commands if c[:2] == ["input", "swipe"]) == swipes_before


@pytest.mark.parametrize("meanwhile", ["another caller's action", "the model's rating only"])
async def test_a_swipe_that_pressed_nothing_is_read_again_when_the_phone_moved(tmp_path, meanwhile) -> None:
    """A swipe over the home screen's empty middle presses nothing, so it was rated as a bare swipe and sent
    as rated: by the time it went out, Settings was up and the same points lie on its "Security & privacy"
    and "Airplane mode" rows (a drag that starts and lifts on a control presses it). It is read again inside
    its turn like a swipe that pressed something, and refused; with nothing moved meanwhile it goes out."""
    async with gateway(tmp_path) as rt:
        runtime = rt.gateway.manager.upstreams["device"].target.server.runtime
        phone, held = runtime.backend, HeldRating(runtime.actuator.classifier)
        runtime.actuator.classifier = held
        swipe = {"x1": 980, "y1": 1000, "x2": 980, "y2": 600}
        async with Client(rt.front.server, elicitation_callback=Answers()) as a, \
                Client(rt.front.server, elicitation_callback=Answers()) as b:
            results: list[Any] = []

            async def swipe_over_nothing() -> None:
                results.append(await a.call_tool("device__swipe", swipe))

            async with anyio.create_task_group() as tg:
                tg.start_soon(swipe_over_nothing)
                await held.entered.wait()  # the swipe is being rated
                if meanwhile == "another caller's action":
                    opened = await b.call_tool("device__open_app", {"package": "com.android.settings"})
                    assert not opened.is_error, opened.content[0].text
                else:
                    phone._go("settings")
                assert phone.screen == "settings"
                swipes_before = sum(1 for c in phone.commands if c[:2] == ["input", "swipe"])
                held.go.set()
            text = results[0].content[0].text
            assert results[0].is_error and "refused as stale" in text, text
            assert "what lies under the swipe changed" in text, text
            assert sum(1 for c in phone.commands if c[:2] == ["input", "swipe"]) == swipes_before
            # nothing moved: the same kind of swipe over nothing on the screen now up is sent
            phone._go("home")
            r = await a.call_tool("device__swipe", swipe)
            assert not r.is_error, r.content[0].text
            assert sum(1 for c in phone.commands if c[:2] == ["input", "swipe"]) == swipes_before + 1


def _dumps(phone: Any) -> int:
    return sum(1 for c in phone.commands if c[:2] == ["uiautomator", "dump"])


def _after_next_dump(phone: Any, then: Any) -> None:
    """Run ``then`` once, right after the phone answers its next dump (between a read and what follows)."""
    run = phone._run

    def hooked(argv: list[str]) -> bytes:
        out = run(argv)
        if argv[:2] == ["uiautomator", "dump"]:
            phone._run = run
            then()
        return out

    phone._run = hooked


def _swap_icons(phone: Any) -> None:
    """The launcher rearranges its icons by itself: Bank where Messages was (same app, same window)."""
    nodes = {n.get("content-desc"): n for n in phone._trees["home"].iter("node")}
    a, b = nodes["Messages"], nodes["Bank"]
    ab, bb = a.get("bounds"), b.get("bounds")
    a.set("bounds", bb)
    b.set("bounds", ab)


def _redraw_search(phone: Any, desc: str) -> None:
    """The home screen's search box changes by itself (a hint that rotates, a feed: the app redraws)."""
    node = next(n for n in phone._trees["home"].iter("node")
                if n.get("content-desc", "").startswith("Search"))
    node.set("content-desc", desc)


async def test_a_screen_seen_changing_by_itself_is_read_again_right_before_the_send(tmp_path) -> None:
    """The screen differed from the caller's snapshot when the tap was read (its search box redrew): a screen
    that changes by itself may change again in the milliseconds before the send. It is read once more inside
    the turn, right before the tap: the launcher put Bank where Messages was after the first read, and the
    tap (at Messages' old centre: Bank's icon now) is refused. A screen that did not change costs one read
    (test above); one that did, two."""
    async with gateway(tmp_path) as rt:
        phone = rt.gateway.manager.upstreams["device"].target.server.runtime.backend
        async with Client(rt.front.server, elicitation_callback=Answers()) as a:
            home = await a.call_tool("device__screen_read", {})
            messages = element(home, text="Messages")
            _redraw_search(phone, "Search the web")
            _after_next_dump(phone, lambda: _swap_icons(phone))  # right after the action's read
            taps, dumps = len(_taps(phone)), _dumps(phone)
            r = await a.call_tool("device__click", {"element_id": messages["id"],
                                                    "snapshot_id": snapshot_id(home)})
            text = r.content[0].text
            assert r.is_error and "refused as stale" in text and "changes by itself" in text, text
            assert len(_taps(phone)) == taps and phone.screen == "home"
            assert _dumps(phone) - dumps == 2  # the action's read, the read before the send
            # the same on a screen that changed by itself but not under the tap: sent, one read more
            _swap_icons(phone)
            home = await a.call_tool("device__screen_read", {})
            _redraw_search(phone, "Search")
            dumps = _dumps(phone)
            r = await a.call_tool("device__click", {"element_id": element(home, text="Messages")["id"],
                                                    "snapshot_id": snapshot_id(home)})
            assert not r.is_error, r.content[0].text
            assert len(_taps(phone)) == taps + 1 and phone.screen == "messages_list"
            assert _dumps(phone) - dumps == 3  # read, read before the send, the fresh screen returned


async def test_a_scroll_of_an_element_on_a_screen_changing_by_itself_is_read_again(tmp_path) -> None:
    """The same for a scroll of one element (a swipe inside it): Settings' title redrew after the caller read
    it, and after the scroll's own read the list put "Reset options" under the point the finger goes down
    at. Read again right before the send, the scroll is refused; nothing was swiped."""
    async with gateway(tmp_path) as rt:
        phone = rt.gateway.manager.upstreams["device"].target.server.runtime.backend
        async with Client(rt.front.server, elicitation_callback=Answers()) as a:
            phone._go("settings")
            nodes = list(phone._trees["settings"].iter("node"))
            rows = [n for n in nodes
                    if n.get("clickable") == "true" and n.get("bounds", "").startswith("[0,")]
            for row in rows:  # a list of rows that take no touch: the scroll presses nothing, asks nothing
                row.set("clickable", "false")
            shown = await a.call_tool("device__screen_read", {})
            listed = next(e for e in shown.structured_content["elements"] if "RecyclerView" in e["class"])
            next(n for n in nodes if n.get("text") == "Settings").set("text", "Settings ")

            def reset_under_the_finger() -> None:
                reset = next(r for r in rows if r.get("bounds") == "[0,1140][1080,1320]")
                reset.set("clickable", "true")
                reset.set("bounds", "[0,1780][1080,1960]")

            _after_next_dump(phone, reset_under_the_finger)
            swipes, dumps = sum(1 for c in phone.commands if c[:2] == ["input", "swipe"]), _dumps(phone)
            r = await a.call_tool("device__scroll", {"direction": "down", "element_id": listed["id"],
                                                     "snapshot_id": snapshot_id(shown)})
            text = r.content[0].text
            assert r.is_error and "refused as stale" in text and "changes by itself" in text, text
            assert sum(1 for c in phone.commands if c[:2] == ["input", "swipe"]) == swipes
            assert _dumps(phone) - dumps == 2


GESTURES = {  # a gesture given by screen points, naming no snapshot
    "swipe": ("device__swipe", {"x1": 162, "y1": 1630, "x2": 162, "y2": 900}),  # from Messages' icon up
    "scroll of the screen": ("device__scroll", {"direction": "down"}),  # the finger goes down on Bank's icon
}


@pytest.mark.parametrize("gesture", list(GESTURES))
async def test_a_gesture_by_points_on_a_screen_changing_by_itself_is_read_again(tmp_path, gesture) -> None:
    """A gesture given by screen points names no snapshot, so nothing told that the screen changed by itself
    since the caller last saw it: it was rated on its own read and sent as rated. The launcher's search box
    redrew after the caller read the home screen, and right after the gesture's read the launcher swapped
    Bank and Messages: the finger would press the other icon. The last screen read is what the caller chose
    its points on: a read of the gesture that differs from it is a screen that changes by itself, read once
    more right before the send, and the gesture is refused. A screen that stood still costs no second read."""
    tool, args = GESTURES[gesture]
    async with gateway(tmp_path) as rt:
        phone = rt.gateway.manager.upstreams["device"].target.server.runtime.backend
        async with Client(rt.front.server, elicitation_callback=Answers()) as a:
            await a.call_tool("device__screen_read", {})
            _redraw_search(phone, "Search the web")
            _after_next_dump(phone, lambda: _swap_icons(phone))  # right after the gesture's read
            swipes, dumps = sum(1 for c in phone.commands if c[:2] == ["input", "swipe"]), _dumps(phone)
            r = await a.call_tool(tool, args)
            text = r.content[0].text
            assert r.is_error and "refused as stale" in text and "changes by itself" in text, text
            assert sum(1 for c in phone.commands if c[:2] == ["input", "swipe"]) == swipes
            assert _dumps(phone) - dumps == 2  # the gesture's read, the read before the send
            # a screen that stood still since the caller read it: one read, then the fresh screen returned
            _swap_icons(phone)
            await a.call_tool("device__screen_read", {})
            dumps = _dumps(phone)
            r = await a.call_tool(tool, args)
            assert not r.is_error, r.content[0].text
            assert sum(1 for c in phone.commands if c[:2] == ["input", "swipe"]) == swipes + 1
            assert _dumps(phone) - dumps == 2
