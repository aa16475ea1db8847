"""Validate fully, then ask, then act: an action whose adb command the backend will refuse as too long is
refused before the user is asked to confirm it (before, the person confirmed a calendar event and only then
heard that it could never be sent). Real device server, fake adb server on 127.0.0.1, a real mcp.Client."""

from __future__ import annotations

import pytest
from tests.device.device_helpers import Answers, adb_server, connect

pytestmark = pytest.mark.timeout(60)
START = "2026-12-03T12:00:00+00:00"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("calendar_create", {"title": "Lunch", "start": START, "description": "'" * 14_000}),  # quoted: 5x
        ("calendar_create", {"title": "Lunch", "start": START, "description": "\U0001f600" * 17_000}),
    ],
)
async def test_a_command_too_long_to_send_is_refused_before_the_user_is_asked(fake_adb, tmp_path, tool,
                                                                               arguments):
    answers = Answers("yes")
    async with connect(adb_server(fake_adb, tmp_path), answers=answers) as client:
        r = await client.call_tool(tool, arguments)
    assert r.is_error and "too long" in r.content[0].text, r.content[0].text
    assert answers.questions == [], answers.questions  # nobody was asked to confirm what cannot be sent
    assert not [c for c in fake_adb.device_commands() if c.startswith(("content insert", "am start"))]
    assert r.structured_content["decision"]["outcome"] == "refused"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("calendar_create", {"title": "Lunch", "start": START, "description": "x" * 70_000}),
        ("calendar_create", {"title": "Lunch", "start": START, "location": "'" * 14_000}),
        ("calendar_create", {"title": "L" * 66_000, "start": START}),
        ("contact_create", {"name": "n" * 70_000, "phone": "+15550100"}),
    ],
)
async def test_a_text_past_its_shape_is_refused_before_the_user_is_asked(fake_adb, tmp_path, tool, arguments):
    answers = Answers("yes")
    async with connect(adb_server(fake_adb, tmp_path), answers=answers) as client:
        r = await client.call_tool(tool, arguments)
    assert r.is_error and "characters" in r.content[0].text, r.content[0].text  # arg_shapes: the bound named
    assert answers.questions == [], answers.questions
    assert not [c for c in fake_adb.device_commands() if c.startswith(("content insert", "am start"))]


async def test_a_command_that_fits_is_still_asked_and_sent(fake_adb, tmp_path):
    answers = Answers("yes")
    async with connect(adb_server(fake_adb, tmp_path), answers=answers) as client:
        r = await client.call_tool("calendar_create",
                                   {"title": "Lunch", "start": START, "description": "x" * 30_000})
    assert len(answers.questions) == 1
    assert [c for c in fake_adb.device_commands() if c.startswith("content insert")], r.content[0].text


@pytest.mark.parametrize("argv", [
    ["input", "keyevent", "KEYCODE_MOVE_END"],  # clear_first's keys: no global action of Termux's
    ["input", "swipe", "10", "900", "10", "100", "300"],  # a scroll: Termux clicks, it does not drag
    ["am", "start", "-a", "android.intent.action.INSERT", "--es", "name", "n" * 140_000],  # past E2BIG
])
async def test_termux_refuses_what_it_cannot_run_before_anything_runs(argv):
    """The actuator asks the gate before it asks the user (the adb cases above go through it): Termux's
    refusal of a command it has no program for, or of an argument Linux would refuse, comes from that check
    and runs nothing."""
    from device_tools.errors import DeviceError
    from device_tools.gate import CommandGate
    from device_tools.termux_backend import TermuxBackend

    calls: list[list[str]] = []
    gate = CommandGate(TermuxBackend(lambda a, t: calls.append(a) or b""))
    with pytest.raises(DeviceError, match="cannot run|too long"):
        gate.check_sendable([argv])
    gate.check_sendable([["input", "tap", "10", "20"], ["am", "start", "-a", "x", "--es", "n", "v"]])
    assert calls == []
