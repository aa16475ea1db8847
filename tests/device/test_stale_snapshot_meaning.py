"""A tap chosen from a screen snapshot is refused as stale when what the tap means changed since that
snapshot, not only when the element itself did. A dialog's "OK" (android:id/button1, the same class, path,
bounds and label in every app's AlertDialog) has the same id and fingerprint whichever dialog it closes:
before, the agent read one app's "Keep your plan?" and its tap landed on another app's "Send $500 to Eve?"
(or on the same app's dialog, reworded) with nothing said. The screen is the simulated phone's real
uiautomator XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from xml.sax.saxutils import quoteattr

import pytest
from tests.device.device_helpers import Answers, connect, element, sim_server, snapshot_id

pytestmark = pytest.mark.timeout(60)


def node(
    pkg, cls="android.widget.TextView", text="", rid="", clickable="false", bounds="[0,0][10,10]", children=()
):
    made = ET.fromstring(
        f'<node index="0" text={quoteattr(text)} resource-id={quoteattr(rid)} class={quoteattr(cls)} '
        f'package={quoteattr(pkg)} content-desc="" checkable="false" checked="false" clickable="{clickable}" '
        'enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" '
        f'password="false" selected="false" bounds="{bounds}" />'
    )
    made.extend(children)
    return made


def dialog(phone, pkg: str, message: str) -> None:
    box = node(
        pkg,
        "android.widget.FrameLayout",
        bounds="[100,800][980,1400]",
        children=[
            node(pkg, text=message, rid="android:id/message", bounds="[140,850][940,1100]"),
            node(
                pkg,
                "android.widget.Button",
                text="Cancel",
                rid="android:id/button2",
                clickable="true",
                bounds="[500,1200][700,1350]",
            ),
            node(
                pkg,
                "android.widget.Button",
                text="OK",
                rid="android:id/button1",
                clickable="true",
                bounds="[740,1200][940,1350]",
            ),
        ],
    )
    root = ET.fromstring('<hierarchy rotation="0"/>')
    root.append(node(pkg, "android.widget.FrameLayout", bounds="[0,0][1080,2400]", children=[box]))
    phone._trees["dialog"] = root
    phone.state.screen = "dialog"


def taps(phone) -> list[list[str]]:
    return [c for c in phone.commands if c[:2] == ["input", "tap"]]


@pytest.mark.parametrize(
    "then",
    [
        ("com.example.bank", "Send $500 to Eve?"),
        ("com.example.notes", "Delete all notes?"),
        ("com.example.notes", "Share your notes with everyone?"),
        ("com.other.app", "Keep your plan?"),
    ],
)
async def test_an_ok_read_under_one_question_is_not_tapped_under_another(tmp_path, then):
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    answers = Answers(*["yes"] * 5)  # whatever the person would be asked about the new dialog, yes
    async with connect(server, answers=answers) as c:
        dialog(phone, "com.example.notes", "Keep your plan?")
        read = await c.call_tool("screen_read", {})
        ok = element(read, text="OK")
        dialog(phone, *then)
        r = await c.call_tool("click", {"element_id": ok["id"], "snapshot_id": snapshot_id(read)})
    assert r.is_error and "stale" in r.content[0].text, r.content[0].text
    assert taps(phone) == [] and answers.questions == []


async def test_an_ok_on_the_same_dialog_is_tapped(tmp_path):
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    async with connect(server) as c:
        dialog(phone, "com.example.notes", "Keep your plan?")
        read = await c.call_tool("screen_read", {})
        ok = element(read, text="OK")
        dialog(phone, "com.example.notes", "Keep your plan?")  # read again, the same
        r = await c.call_tool("click", {"element_id": ok["id"], "snapshot_id": snapshot_id(read)})
    assert not r.is_error, r.content[0].text
    assert len(taps(phone)) == 1
