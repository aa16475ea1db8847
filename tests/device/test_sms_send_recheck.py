"""sms_send taps Send only while the screen still shows what the person confirmed.

The person is asked before the SENDTO intent; the tool then reads the compose screen, checks it shows this
recipient and this text, and taps Send. Between that read and the tap another app, a hostile screen or an IME
autocorrect can change the screen: the recipient, the message text, a second "Send" control (a payment "Send
$"), something drawn over Send, another app in front. The tap goes only if a read just before it still shows
exactly what was checked (the same reading ``rated_reading`` builds for a confirmed tap), else nothing is
tapped and the result says why.

Real parts: adbutils against the fake adb server backed by the simulated phone; its uiautomator XML changes
right after the reads that checked the compose screen (as a hostile app or the keyboard would change it)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.device.device_helpers import Answers, adb_server, connect, ui_node
from tests.device.test_sms_compose_screen import DUMP, MESSAGES, acted, dump, intent, \
    look_alike_compose, text_of, window

from device_tools.simulated import SimulatedDevice

pytestmark = pytest.mark.timeout(60)
TO = "+15550123"  # no contact: the simulated app titles the conversation with the number
BODY = "running late"


def compose_view(phone: SimulatedDevice):
    return next(n for n in phone._trees["compose"].iter()
                if n.get("resource-id", "").endswith("/compose_message_view"))


def set_body(text: str) -> Callable[[SimulatedDevice], None]:
    def change(phone: SimulatedDevice) -> None:
        phone.state.fields = {k: (text if k[0] == "compose" else v) for k, v in phone.state.fields.items()}
    return change


def set_recipient(phone: SimulatedDevice) -> None:
    phone.state.vars["conversation"] = "+15550666"


def add_pay_send(phone: SimulatedDevice) -> None:
    """The messaging app's payment overlay: a second "Send $" control, drawn on top, not over Send."""
    compose_view(phone).append(ui_node("android.widget.Button", MESSAGES, "[20,1900][400,2000]",
                                       text="Send $", clickable="true"))


def cover_send(phone: SimulatedDevice) -> None:
    """A control of the same window drawn over the Send button: a tap there reaches it instead."""
    compose_view(phone).append(ui_node("android.widget.Button", MESSAGES, "[880,2050][1060,2230]",
                                       text="Pay $500", clickable="true"))


def bank_in_front(phone: SimulatedDevice) -> None:
    phone._go("bank_transfer")


CHANGES: dict[str, Callable[[SimulatedDevice], None]] = {
    "autocorrect changes the text": set_body("running latte"),
    "a hostile app rewrites the text": set_body("Send $900 to Mallory"),
    "the text is emptied": set_body(""),
    "the recipient changes": set_recipient,
    "a second Send control appears": add_pay_send,
    "something is drawn over Send": cover_send,
    "another app comes to the front": bank_in_front,
}


def change_after_check(phone: SimulatedDevice, change: Callable[[SimulatedDevice], None]) -> None:
    """Apply ``change`` right after the tool's checks of the compose screen with this message: its dump,
    then the window list read for overlays (the last read before the Send tap used to be)."""
    real = phone._run
    seen: list[str] = []

    def run(a: list[str]) -> bytes:
        out = real(a)
        if a[:2] == ["uiautomator", "dump"] and not seen and phone.screen == "compose" \
                and phone.field_text("compose_message_text") == BODY:
            seen.append("checked")
        elif a == ["dumpsys", "window", "windows"] and seen == ["checked"]:
            seen.append("changed")
            change(phone)
        return out

    phone._run = run  # type: ignore[method-assign]


@pytest.mark.parametrize("name", sorted(CHANGES))
async def test_a_change_after_the_check_refuses_the_send(fake_adb, tmp_path, name):
    change_after_check(fake_adb.device, CHANGES[name])
    answers = Answers("yes")
    async with connect(adb_server(fake_adb, tmp_path, compose_timeout=0.5), "legacy", answers) as client:
        r = await client.call_tool("sms_send", {"to": TO, "body": BODY})
    assert len(answers.questions) == 1
    assert r.is_error and "NOT sent" in text_of(r) and "changed" in text_of(r), text_of(r)
    assert acted(fake_adb) == [intent(TO)]  # the intent, and no tap anywhere
    assert fake_adb.device.sent_messages == [] and fake_adb.device.transfers == []
    assert "screen" not in (r.structured_content or {})  # the conversation is a messages read: not shown


async def test_a_new_message_in_the_list_does_not_stop_the_send(fake_adb, tmp_path):
    change_after_check(fake_adb.device, lambda phone: phone.state.vars.update(last_message="on my way"))
    async with connect(adb_server(fake_adb, tmp_path), "legacy", Answers("yes")) as client:
        r = await client.call_tool("sms_send", {"to": TO, "body": BODY})
    assert not r.is_error, text_of(r)
    assert acted(fake_adb) == [intent(TO), "input tap 970 2140"]
    assert [(m.to, m.body) for m in fake_adb.device.sent_messages] == [(TO, BODY)]


SHOWN_ELSEWHERE = {
    # Mallory's conversation; the recipient's number only inside the message text
    "the number only in the text": (f"call me at {TO}", lambda body: dump(
        window(MESSAGES, *look_alike_compose(MESSAGES, title="+15550666", body=body)))),
    # Mallory's conversation; the number in a message bubble's words
    "the number only in a bubble's words": (BODY, lambda body: dump(window(
        MESSAGES, ui_node("android.widget.TextView", MESSAGES, "[60,300][800,420]", text=f"ask {TO} too"),
        *look_alike_compose(MESSAGES, title="+15550666", body=body)))),
    # this conversation, but two Send controls: which one sends this message is not certain
    "two Send controls": (BODY, lambda body: dump(window(
        MESSAGES, *look_alike_compose(MESSAGES, title=TO, body=body),
        ui_node("android.widget.Button", MESSAGES, "[20,1900][400,2000]", text="Send $", clickable="true")))),
}


@pytest.mark.parametrize("name", sorted(SHOWN_ELSEWHERE))
async def test_the_recipient_and_send_must_be_shown_as_such(fake_adb, tmp_path, name):
    body, screen = SHOWN_ELSEWHERE[name]
    fake_adb.script[DUMP].extend([screen(body)] * 40)
    async with connect(adb_server(fake_adb, tmp_path, compose_timeout=0.5), "legacy", Answers("yes")) as c:
        r = await c.call_tool("sms_send", {"to": TO, "body": body})
    assert r.is_error and "NOT sent" in text_of(r), text_of(r)
    assert acted(fake_adb) == [intent(TO, body)]
