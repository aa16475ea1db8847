"""What a screen tool reads on the way is shown too: a personal app on the screen an action re-read (a
heads-up notification drawn over the control it taps, the other labels an "OK" is rated with) or on the
snapshot the caller names (another principal's, read with her consent) withholds the result, though the
result names only a harmless app. Through the real gateway and the simulated phone, a heads-up notification
arriving as on a phone (its own systemui window over the app)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.core.port import Completed
from sentinel_mcp.paths import RULEBASES_DIR
from tests.identity.identity_rig import ALICE, BOB
from tests.device.device_helpers import ui_node

pytestmark = pytest.mark.timeout(120)
MESSAGES = "com.google.android.apps.messaging"
SETTINGS = "com.android.settings"
SYSUI = "com.android.systemui"
NOTICE = "Messages notification: Bank Alerts: Your one-time code is 482913"
SECRETS = ("482913", "Bank Alerts", "one-time", "Alice", "Contact photo", "See you at 7")


def config(tmp_path: Path) -> Any:
    return parse_config({"mcpServers": {}, "sentinel": {
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
        "builtins": ["device"], "data_dir": str(tmp_path),
        "principals": [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}],
        "device": {"backend": "simulated", "risk_classifier": False, "confirm_timeout": 2}}},
        base_dir=tmp_path)


def phone(rt: Any) -> Any:
    return rt.gateway.manager.upstreams["device"].target.server.runtime.backend


def n(cls: str = "android.widget.TextView", pkg: str = SETTINGS, bounds: str = "[0,0][10,10]",
      children: tuple = (), **attrs: str) -> ET.Element:
    return ui_node(cls, pkg, bounds, children, **attrs)


def heads_up() -> ET.Element:
    """A heads-up notification: the system UI's own window over the top of the app (as a dump lists it)."""
    row = n("android.widget.FrameLayout", SYSUI, "[24,60][1056,400]", (
        n(pkg=SYSUI, bounds="[60,90][900,150]", text="Bank Alerts", resource_id="android:id/title"),
        n(pkg=SYSUI, bounds="[60,160][1000,220]", text="Your one-time code is 482913",
          resource_id="android:id/text"),
    ), clickable="true", focusable="true", content_desc=NOTICE,
        resource_id="com.android.systemui:id/expandableNotificationRow")
    return n("android.widget.FrameLayout", SYSUI, "[0,0][1080,420]", (row,))


class Person:
    """Says no to every question (the phone's confirmation and Sentinel's consent alike)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, ctx: Any, params: Any) -> ElicitResult:
        self.asked.append(params.message)
        return ElicitResult(action="decline")


def everything(result: Any) -> str:
    return json.dumps([result.model_dump(mode="json", by_alias=True)], default=str)


def assert_withheld(result: Any, kinds: list[str]) -> None:
    shown = everything(result)
    assert not [s for s in SECRETS if s in shown], shown[:800]
    assert result.structured_content["withheld"]["kinds"] == kinds, shown[:800]


async def test_a_tap_refused_for_a_notification_drawn_over_its_control_does_not_name_it(tmp_path):
    async with running_gateway(config(tmp_path)) as rt:
        # Settings' home names the Wi-Fi the phone is on: that consent held, the notification alone is missing
        rt.gateway.consent_gate.book.grant("owner", "nearby_devices", by="cli")
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Person()) as c:
            await c.call_tool("device__open_app", {"package": SETTINGS})
            read = await c.call_tool("device__screen_read", {})
            assert "withheld" not in read.structured_content  # Settings needs no other consent
            snapshot = read.structured_content["snapshot_id"]
            bar = next(e["id"] for e in read.structured_content["elements"] if e["desc"] == "Search settings")
            phone(rt)._trees["settings"].append(heads_up())  # a code arrives: its heads-up covers the bar
            assert_withheld(await c.call_tool("device__screen_read", {}), ["notifications"])
            for tool in ("device__click", "device__long_click"):
                refused = await c.call_tool(tool, {"element_id": bar, "snapshot_id": snapshot})
                assert refused.is_error
                assert_withheld(refused, ["notifications"])  # not "would reach ... ('... code is 482913')"


async def test_a_declined_tap_does_not_show_the_screen_it_was_rated_with(tmp_path):
    """A bare "OK" is rated with every other label on the screen; declined, its decision comes back."""
    panel = n("android.widget.LinearLayout", SETTINGS, "[60,800][1020,1500]", (
        n(bounds="[100,850][980,950]", text="Reset network settings?", resource_id="android:id/alertTitle"),
        n(bounds="[100,960][980,1200]", text="Wi-Fi, mobile data and Bluetooth will be reset",
          resource_id="android:id/message"),
        n("android.widget.Button", SETTINGS, "[560,1300][980,1440]", text="OK",
          resource_id="android:id/button1", clickable="true", focusable="true"),
    ), resource_id="android:id/parentPanel")
    root = ET.fromstring('<hierarchy rotation="0"/>')
    root.extend([n("android.widget.FrameLayout", SETTINGS, "[0,0][1080,2400]", (panel,)), heads_up()])
    person = Person()
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as c:
            await c.call_tool("device__open_app", {"package": SETTINGS})
            phone(rt)._trees["settings"] = root
            # a swipe needs no snapshot: across "OK", which a drag still presses
            swiped = await c.call_tool("device__swipe", {"x1": 700, "y1": 1370, "x2": 900, "y2": 1370})
            assert person.asked and swiped.structured_content["status"] == "denied"
            assert_withheld(swiped, ["notifications"])


async def test_a_stale_refusal_on_another_principals_snapshot_does_not_name_its_elements(tmp_path):
    async with running_gateway(config(tmp_path)) as rt:
        gw = rt.gateway
        gw.consent_gate.book.grant("alice", "messages", by="cli")
        alice: dict[str, Any] = {"session_id": "s-alice", "origin": "client", "principal": "alice"}
        await gw.invoke("device__open_app", {"package": MESSAGES}, **alice)
        read = await gw.invoke("device__screen_read", {}, **alice)
        assert isinstance(read, Completed) and "See you at 7" in everything(read.result)
        snapshot = read.result.structured_content["snapshot_id"]
        await gw.invoke("device__press_home", {}, **alice)  # the screen moves on: her snapshot is stale
        bob: dict[str, Any] = {"session_id": "s-bob", "origin": "client", "principal": "bob"}
        for index in ("6", "8", "11"):  # her elements by index: a contact's photo, a name, ...
            for tool, extra in (("device__click", {}), ("device__type_text", {"text": "x"}),
                                ("device__scroll", {"direction": "down"})):
                out = await gw.invoke(tool, {"element_id": index, "snapshot_id": snapshot, **extra}, **bob)
                assert isinstance(out, Completed), out
                assert_withheld(out.result, ["messages"])
        out = await gw.invoke("device__click", {"element_id": "6", "snapshot_id": snapshot}, **alice)
        assert "Contact photo of Alice" in everything(out.result)  # hers to see: she has the consent


@pytest.mark.parametrize("bounds", ["[0,0][0,0]", "[0,2400][1080,2400]"])
async def test_a_container_does_not_say_what_a_personal_app_nested_in_it_shows(tmp_path, bounds):
    """An unlabeled container is listed with its first inner labels: a personal app's node among them counts,
    though it is not listed itself (zero-sized, off the screen's bottom edge)."""
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Person()) as c:
            home = await c.call_tool("device__screen_read", {})
            assert "withheld" not in home.structured_content and "Sun, Nov 22" in everything(home)
            tree = phone(rt)._trees["home"]
            workspace = next(x for x in tree.iter("node") if x.get("resource-id", "").endswith("/workspace"))
            workspace.insert(0, n(pkg=SYSUI, bounds=bounds, text="Bank Alerts: Your one-time code is 482913"))
            assert_withheld(await c.call_tool("device__screen_read", {}), ["notifications"])


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_phones_question_for_a_risky_tap_quotes_nothing_the_caller_may_not_read(tmp_path, mode):
    """A bare "OK" is asked about with what it stands under; with no container of its own, that is every
    label on the screen: the notification's code too. The question goes to the caller's client."""
    app = n("android.widget.FrameLayout", SETTINGS, "[0,0][1080,2400]", (
        n(bounds="[100,850][980,950]", text="Erase all data?"),
        n("android.widget.Button", SETTINGS, "[560,1300][980,1440]", text="OK",
          resource_id="android:id/button1", clickable="true", focusable="true"),
    ))
    root = ET.fromstring('<hierarchy rotation="0"/>')
    root.extend([app, heads_up()])
    person = Person()
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=person) as c:
            await c.call_tool("device__open_app", {"package": SETTINGS})
            phone(rt)._trees["settings"] = root
            swiped = await c.call_tool("device__swipe", {"x1": 700, "y1": 1370, "x2": 900, "y2": 1370})
            assert_withheld(swiped, ["notifications"])
            assert len(person.asked) == 1, person.asked  # still asked: the person decides, on the phone
            asked = person.asked[0]
            assert not [s for s in SECRETS if s in asked] and "Erase all data" not in asked, asked
            assert "the notification shade" in asked and asked.startswith("Risk critical: "), asked
            assert "deletes data" not in asked  # nor the words the risk was read from
            # with the consent, the question says what is tapped, as before
            rt.gateway.consent_gate.book.grant("owner", "notifications", by="cli")
            await c.call_tool("device__swipe", {"x1": 700, "y1": 1370, "x2": 900, "y2": 1370})
            said = "Tap OK under \u201cErase all data? | Messages notification"
            assert said in person.asked[-1], person.asked


async def test_wait_for_answers_with_the_screen_it_found_not_the_ones_it_polled_before(tmp_path):
    """A personal app on screen while wait_for polls does not withhold the answer found after it left (only
    the screen answered with is shown; the polls before were not searched for what the caller may not see)."""
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Person()) as c:
            await c.call_tool("device__open_app", {"package": MESSAGES})
            assert_withheld(await c.call_tool("device__screen_read", {}), ["messages"])
            found: dict[str, Any] = {}

            async def wait() -> None:
                args = {"text": "Sun, Nov 22", "timeout_s": 5}
                found["result"] = await c.call_tool("device__wait_for", args)

            async with anyio.create_task_group() as tg:
                tg.start_soon(wait)
                await anyio.sleep(0.3)
                phone(rt).state.screen = "home"  # the person goes home on the phone meanwhile
            result = found["result"]
            assert not result.is_error and "withheld" not in result.structured_content, everything(result)
            assert result.structured_content["found"][0]["text"] == "Sun, Nov 22"
