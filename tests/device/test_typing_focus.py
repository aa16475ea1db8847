"""Typing taps the field, then sends the text: between the two the screen may move the focus (the app
reacts to the tap by focusing another field, or brings another app to the front), and ``input text`` types
into whatever is focused then. The device types only into the field it rated and the person confirmed: after
the tap it reads the screen again and sends nothing when that field is not the focused one. Fake adb server
speaking the adb protocol, simulated phone with its real uiautomator XML."""

from __future__ import annotations

import pytest
from tests.device.device_helpers import Answers, adb_server, connect, element, snapshot_id

pytestmark = pytest.mark.timeout(60)
SECRET = "hunter2x"
COMPOSE_FIELD = "com.google.android.apps.messaging:id/compose_message_text"


def key_of(phone, screen: str, rid: str) -> str:
    return next(k for k, n, _ in phone._walk(phone._trees[screen]) if n.get("resource-id") == rid)


def focus_moves_after_a_tap(phone, where: str) -> None:
    """The next tap on the phone ends with another field focused (``where``: in the same app, or in the
    messaging app brought to the front)."""
    tap = phone._tap

    def moved(x: int, y: int, *, long: bool) -> None:
        tap(x, y, long=long)
        phone._tap = tap
        if where == "other app":
            phone._go("compose")
            phone.state.focused = ("compose", key_of(phone, "compose", COMPOSE_FIELD))
        else:
            phone.state.focused = ("bank_login", key_of(phone, "bank_login", "com.example.bank:id/username"))

    phone._tap = moved


@pytest.mark.parametrize("where", ["other app", "other field"])
async def test_text_is_not_typed_when_the_focus_moved_after_the_tap(fake_adb, tmp_path, where):
    phone = fake_adb.device
    phone.state.screen = "bank_login"
    answers = Answers("yes")  # the person allows typing the password into the bank's password field
    async with connect(adb_server(fake_adb, tmp_path), "legacy", answers) as client:
        screen = await client.call_tool("screen_read", {})
        field = element(screen, resource_id="com.example.bank:id/password")
        focus_moves_after_a_tap(phone, where)
        chosen = {"element_id": field["id"], "snapshot_id": snapshot_id(screen), "text": SECRET}
        r = await client.call_tool("type_text", chosen)
    assert len(answers.questions) == 1
    assert r.is_error, r.content[0].text
    assert not [c for c in fake_adb.device_commands() if c.startswith("input text")]
    assert SECRET not in "".join(phone.state.fields.values())


async def test_text_is_typed_when_the_field_took_the_focus(fake_adb, tmp_path):
    phone = fake_adb.device
    phone.state.screen = "bank_login"
    async with connect(adb_server(fake_adb, tmp_path), "legacy", Answers("yes")) as client:
        screen = await client.call_tool("screen_read", {})
        field = element(screen, resource_id="com.example.bank:id/username")
        chosen = {"element_id": field["id"], "snapshot_id": snapshot_id(screen), "text": "alice"}
        r = await client.call_tool("type_text", chosen)
    assert not r.is_error, r.content[0].text
    assert phone.state.fields[("bank_login", key_of(phone, "bank_login", "com.example.bank:id/username"))] \
        == "alice"
