"""sms_send taps Send only in the messaging app's compose screen for the message the person approved.

`am start` returns before the app is up (no -W), so right after the SENDTO intent the phone may still show
whatever app was in front: a bank's "Send $900 to Mallory" screen with its own "Send" button. The person
approved an SMS, not that. The tool waits (bounded) for a messaging app's window (by the package Android
names for the window, not a node's claim) showing this recipient and this body, taps only a Send control in
that window that a tap at its centre really reaches, and the approval covers exactly that one tap; otherwise
nothing is tapped and the result says the message was NOT sent.

Real parts: adbutils against the fake adb server backed by the simulated phone and its uiautomator XML; the
hostile screens are real dumps the fake adb serves (the red team's t5 among them)."""

from __future__ import annotations

import shlex
import xml.etree.ElementTree as ET

import pytest
from tests.device.device_helpers import Answers, adb_server, connect
from tests.device.test_tap_integrity import node

from device_tools import commands as C
from device_tools.gate import Approval

pytestmark = pytest.mark.timeout(60)
DUMP = "uiautomator dump /dev/tty"
BANK = "com.example.bank"
MESSAGES = "com.google.android.apps.messaging"
BODY = "running late"
def window(pkg, *children):
    return node(cls="android.widget.FrameLayout", pkg=pkg, clickable="false", bounds="[0,0][1080,2400]",
                children=children)


def dump(*windows) -> bytes:
    root = ET.fromstring('<hierarchy rotation="0"/>')
    root.extend(windows)
    return b"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>" + ET.tostring(root) + b"\n"


def bank_send() -> ET.Element:
    """The red team's screen (t5): the bank's own transfer, with a Send button."""
    return window(BANK,
                  node("Send $900 to Mallory", cls="android.widget.TextView", clickable="false",
                       bounds="[90,300][990,400]"),
                  node("Send", rid=f"{BANK}:id/send_money", bounds="[90,1000][990,1140]"))


def look_alike_compose(pkg_of_nodes: str, title: str = "+15550100", body: str = BODY,
                       send_enabled: str = "true") -> list[ET.Element]:
    """A compose screen's nodes: a title, the message field with ``body`` and a Send SMS button."""
    return [
        node(title, rid=f"{pkg_of_nodes}:id/conversation_title", cls="android.widget.TextView",
             pkg=pkg_of_nodes, clickable="false", bounds="[150,120][700,200]"),
        node(body, rid=f"{pkg_of_nodes}:id/compose_message_text", cls="android.widget.EditText",
             pkg=pkg_of_nodes, bounds="[140,2060][880,2200]"),
        node(desc="Send SMS", rid=f"{pkg_of_nodes}:id/send_message_button_icon",
             cls="android.widget.ImageButton", pkg=pkg_of_nodes, enabled=send_enabled,
             bounds="[900,2070][1040,2210]"),
    ]


HOSTILE = {
    # the red team's: the bank's transfer screen stays in front while the compose screen loads
    "bank transfer with a Send button": lambda: dump(bank_send()),
    # the bank draws a compose screen of its own (title, the very body, "Send SMS"): not a messaging app
    "bank window mimicking the compose screen": lambda: dump(window(BANK, *look_alike_compose(BANK))),
    # the bank's nodes claim the messaging app's package; the window Android names is still the bank's
    "bank window whose nodes claim the messaging package": lambda: dump(
        window(BANK, *look_alike_compose(MESSAGES))),
    # the real compose screen, with a bank overlay window drawn over its Send button
    "compose with an overlay over Send": lambda: dump(
        window(MESSAGES, *look_alike_compose(MESSAGES)),
        node("Send", rid=f"{BANK}:id/send_money", pkg=BANK, bounds="[880,2050][1060,2230]")),
    # the messaging app, but another conversation (Mallory's number) with the same text
    "compose for another recipient": lambda: dump(
        window(MESSAGES, *look_alike_compose(MESSAGES, title="+15550666"))),
    # the messaging app, this recipient, but another draft in the field
    "compose with another text": lambda: dump(
        window(MESSAGES, *look_alike_compose(MESSAGES, body="Send $900 to Mallory"))),
    # the compose screen whose Send is disabled
    "compose whose Send is disabled": lambda: dump(
        window(MESSAGES, *look_alike_compose(MESSAGES, send_enabled="false"))),
}


def intent(to: str, body: str = BODY) -> str:
    return shlex.join(C.am_start("android.intent.action.SENDTO", data=f"sms:{to}",
                                 extras=[("--es", "sms_body", body), ("--ez", "exit_on_sent", "true")]))


def acted(fake) -> list[str]:
    return [c for c in fake.device_commands() if c.startswith(("am ", "input "))]


def text_of(result) -> str:
    return result.content[0].text


@pytest.mark.parametrize("screen", sorted(HOSTILE))
async def test_after_the_intent_no_other_app_gets_the_tap(fake_adb, tmp_path, screen):
    """The SENDTO intent is answered but the screen is not the compose screen for this message (it stays so):
    nothing is tapped, the result says the message was not sent, and the person's yes was spent on nothing
    else."""
    hostile = HOSTILE[screen]()
    fake_adb.script[intent("+15550100")].append(b"Starting: Intent { act=android.intent.action.SENDTO }\n")
    fake_adb.script[DUMP].extend([hostile] * 40)
    answers = Answers("yes")
    async with connect(adb_server(fake_adb, tmp_path, compose_timeout=0.8), "legacy", answers) as client:
        r = await client.call_tool("sms_send", {"to": "+15550100", "body": BODY})
    assert answers.questions == [
        "Risk high: Send an SMS to +15550100: \u201crunning late\u201d? (sends an SMS)"]
    assert r.is_error and "NOT sent" in text_of(r) and "did not come up" in text_of(r), text_of(r)
    assert acted(fake_adb) == [intent("+15550100")]  # the intent, and no tap anywhere
    assert fake_adb.device.sent_messages == [] and fake_adb.device.transfers == []
    assert r.structured_content["decision"]["outcome"] == "error"


async def test_a_compose_screen_that_comes_up_late_gets_the_one_tap(fake_adb, tmp_path):
    """The phone shows the bank for the first reads after the intent, then the messaging app: the tap waits
    for it and lands on its Send, once."""
    fake_adb.device.state.screen = "home"
    fake_adb.script[DUMP].extend([dump(bank_send())] * 3)
    answers = Answers("yes")
    async with connect(adb_server(fake_adb, tmp_path, compose_timeout=5), "legacy", answers) as client:
        r = await client.call_tool("sms_send", {"to": "+1 555 0100", "body": BODY})
    assert not r.is_error, text_of(r)
    assert acted(fake_adb) == [intent("+15550100"), "input tap 970 2140"]
    assert [(m.to, m.body) for m in fake_adb.device.sent_messages] == [("+15550100", BODY)]
    sent = C.am_start("android.intent.action.SENDTO", data="sms:+15550100",
                      extras=[("--es", "sms_body", BODY), ("--ez", "exit_on_sent", "true")])
    assert r.structured_content["decision"]["commands"] == [" ".join(sent), "input tap 970 2140"]


@pytest.mark.parametrize("to,shown", [
    ("+15550100", "Alice"),  # a contact's number: the app titles the conversation with the name
    ("Alice", "Alice"),  # a contact's name
    ("+15550123", "+15550123"),  # a number of no contact: the app shows the number
    ("555 012-3456", "5550123456"),
])
async def test_the_compose_screen_for_this_message_gets_its_send_tapped(fake_adb, tmp_path, to, shown):
    answers = Answers("yes")
    async with connect(adb_server(fake_adb, tmp_path), "legacy", answers) as client:
        r = await client.call_tool("sms_send", {"to": to, "body": "See you at 7"})
    assert not r.is_error, text_of(r)
    assert fake_adb.device.state.vars["conversation"] == shown
    assert acted(fake_adb)[-1] == "input tap 970 2140" and len(acted(fake_adb)) == 2
    assert [m.body for m in fake_adb.device.sent_messages] == ["See you at 7"]


async def test_the_approval_covers_the_intent_and_then_exactly_one_tap(fake_adb, tmp_path, monkeypatch):
    """No wildcard: what the gate is allowed is the intent's argv, then the one tap the tool checked."""
    seen: list[list[tuple]] = []
    real_consume = Approval.consume

    def consume(self, argv):
        seen.append(list(self.allowances))
        return real_consume(self, argv)

    monkeypatch.setattr(Approval, "consume", consume)
    async with connect(adb_server(fake_adb, tmp_path), "legacy", Answers("yes")) as client:
        r = await client.call_tool("sms_send", {"to": "+15550100", "body": BODY})
    assert not r.is_error, text_of(r)
    assert all(None not in pattern for allowances in seen for pattern in allowances), seen
    assert seen[-1] == [("input", "tap", "970", "2140")]
