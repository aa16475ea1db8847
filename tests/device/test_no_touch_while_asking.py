"""While the phone asks the person (the Termux dialog on its screen, or the wait for a Volume Up press), no
action reaches the phone. On Termux the question is a dialog drawn on the screen, and a tap is an
accessibility click: another call's approved low-risk tap (any label: "OK", "yes" is no risky word) landed
on the dialog's button and answered the question for the user. Commands asked for meanwhile are refused,
not queued (a tap held back until the person answered would land on a screen no one rated)."""

from __future__ import annotations

import json
import threading

import anyio
import pytest
from tests.device.device_helpers import adb_server, connect

from device_tools.errors import CommandRefused
from device_tools.gate import Approval, CommandGate
from device_tools.termux_backend import TermuxBackend

pytestmark = pytest.mark.timeout(60)

TAP = ["input", "tap", "540", "1200"]


class DialogPhone:
    """A Termux runner whose confirm dialog stays up until a click reaches the screen (as a real one does
    when the click lands on its "yes"), or until ``dismiss``."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.dialog_up = threading.Event()
        self.answered = threading.Event()

    def __call__(self, argv: list[str], timeout: float) -> bytes:
        self.calls.append(argv)
        if argv[:2] == ["termux-dialog", "confirm"]:
            self.dialog_up.set()
            self.answered.wait(timeout)
            clicked = any(c[:2] == ["termux-accessibility", "click"] for c in self.calls)
            return json.dumps({"code": -1, "text": "yes" if clicked else "no"}).encode()
        if argv[:2] == ["termux-accessibility", "click"] and self.dialog_up.is_set():
            self.answered.set()  # the click landed on the dialog's button
        return b""


async def test_a_tap_while_the_termux_dialog_asks_is_refused_and_cannot_answer_it():
    phone = DialogPhone()
    gate = CommandGate(TermuxBackend(phone))
    answer: list[bool] = []

    async def ask() -> None:
        answer.append(await gate.wait_for_key("KEY_VOLUMEUP", timeout=5, question="Send the SMS?"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask)
        await anyio.to_thread.run_sync(phone.dialog_up.wait, 5)
        with pytest.raises(CommandRefused, match="asking the person"):
            await gate.run(TAP, Approval("d", "firewall:low-risk").allow(TAP))
        phone.answered.set()  # the person dismisses it
    assert answer == [False]
    assert not [c for c in phone.calls if c[:2] == ["termux-accessibility", "click"]]
    # once answered, the phone takes commands again
    await gate.run(TAP, Approval("d", "firewall:low-risk").allow(TAP))
    assert phone.calls[-1] == ["termux-accessibility", "click", "540", "1200"]


async def test_an_action_while_the_phone_waits_for_volume_up_is_refused(fake_adb, tmp_path):
    server = adb_server(fake_adb, tmp_path, physical_confirmation=True, confirm_timeout=5)
    results = {}
    async with connect(server) as client:

        async def risky() -> None:  # `cat` is medium risk: it waits for a press
            results["cat"] = await client.call_tool("terminal_run", {"command": "cat", "args": ["/sdcard/a"]})

        async with anyio.create_task_group() as tg:
            tg.start_soon(risky)
            for _ in range(500):
                if fake_adb.key_waiting:
                    break
                await anyio.sleep(0.01)
            assert fake_adb.key_waiting
            results["back"] = await client.call_tool("press_back", {})
            fake_adb.press_key()
    back = results["back"]
    assert back.is_error and "asking the person" in back.content[0].text, back.content[0].text
    assert not [c for c in fake_adb.device_commands() if "KEYCODE_BACK" in c]
    assert results["cat"].structured_content["decision"]["answer"] == "confirmed"  # the press still counts
    assert [c for c in fake_adb.device_commands() if c.startswith("cat ")]
