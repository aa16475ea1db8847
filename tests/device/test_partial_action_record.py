"""An action stopped half way sent something: its decision (on record, and in the result) lists what went.
The record of an action that ended in an error (or a refusal of a later command) listed no command, though
its tap had reached the phone. Fake adb server, simulated phone (``test_typing_focus``'s moving focus)."""

from __future__ import annotations

import pytest
from tests.device.device_helpers import Answers, adb_server, connect, element, snapshot_id
from tests.device.test_typing_focus import SECRET, focus_moves_after_a_tap

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("field,shown", [("password", "<redacted>"), ("username", None)])
async def test_the_tap_sent_before_the_text_was_stopped_is_on_record(fake_adb, tmp_path, field, shown):
    phone = fake_adb.device
    phone.state.screen = "bank_login"
    async with connect(adb_server(fake_adb, tmp_path), "legacy", Answers("yes")) as client:
        screen = await client.call_tool("screen_read", {})
        target = element(screen, resource_id=f"com.example.bank:id/{field}")
        focus_moves_after_a_tap(phone, "other field" if field == "password" else "other app")
        chosen = {"element_id": target["id"], "snapshot_id": snapshot_id(screen), "text": SECRET}
        r = await client.call_tool("type_text", chosen)
    assert r.is_error
    [tap] = [c for c in fake_adb.device_commands() if c.startswith("input tap")]
    assert r.structured_content["decision"]["commands"] == [shown or tap]  # a password field's: redacted
