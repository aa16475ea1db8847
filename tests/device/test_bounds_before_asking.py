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
        ("calendar_create", {"title": "Lunch", "start": START, "description": "x" * 70_000}),
        ("calendar_create", {"title": "Lunch", "start": START, "location": "'" * 14_000}),  # quoted: 5x
        ("calendar_create", {"title": "Lunch", "start": START, "description": "\U0001f600" * 17_000}),
        ("calendar_create", {"title": "L" * 66_000, "start": START}),
        ("contact_create", {"name": "n" * 70_000, "phone": "+15550100"}),
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


async def test_a_command_that_fits_is_still_asked_and_sent(fake_adb, tmp_path):
    answers = Answers("yes")
    async with connect(adb_server(fake_adb, tmp_path), answers=answers) as client:
        r = await client.call_tool("calendar_create",
                                   {"title": "Lunch", "start": START, "description": "x" * 30_000})
    assert len(answers.questions) == 1
    assert [c for c in fake_adb.device_commands() if c.startswith("content insert")], r.content[0].text
