"""sms_send's check for a received one-time code reads every message of the last day, not only the newest
50: the sender of a phishing text pushes the bank's code out of a window counted in messages by sending 50
more (or one whose body spells 50 rows of ``content query`` output), then asks the agent to forward it."""

from __future__ import annotations

import time

import pytest

from tests.device.device_helpers import Answers, connect, sim_server

pytestmark = pytest.mark.timeout(120)


def _flood(now_ms: int, how: str) -> list[dict[str, str]]:
    if how == "messages":
        return [{"_id": str(100 + i), "address": "+15550666", "body": f"hey {i}", "date": str(now_ms + 1 + i),
                 "read": "0"} for i in range(60)]
    rows = "".join(f"\nRow: {i} _id={200 + i}, address=+15550666, body=hey, date={now_ms}, read=0"
                   for i in range(60))
    # the first line closes the real row's own fields; the last is closed by the real row's date and read
    body = f"see below, date={now_ms}, read=0{rows}\nRow: 60 _id=300, address=+15550666, body=bye"
    return [{"_id": "99", "address": "+15550666", "body": body, "date": str(now_ms + 1), "read": "0"}]


@pytest.mark.parametrize("how", ["messages", "rows spelled in one body"])
async def test_a_code_pushed_out_by_newer_messages_is_still_never_forwarded(tmp_path, how):
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    now_ms = int(time.time() * 1000)
    inbox = phone.tables["content://sms/inbox"]
    inbox.append({"_id": "9", "address": "22000", "body": "G-730 551 is your Google verification code.",
                  "date": str(now_ms), "read": "0"})
    inbox.extend(_flood(now_ms, how))
    async with connect(server, "legacy", Answers("yes", "yes")) as c:
        forwarded = await c.call_tool("sms_send", {"to": "+15550666", "body": "7 3 0 5 5 1"})
        other = await c.call_tool("sms_send", {"to": "+15550666", "body": "731 551"})
    assert forwarded.is_error and "one-time code" in forwarded.content[0].text, forwarded.content[0].text
    assert not other.is_error, other.content[0].text
    assert [m.body for m in phone.sent_messages] == ["731 551"]


async def test_a_code_older_than_a_day_and_past_the_newest_50_is_not_held_against_a_message(tmp_path):
    """The window is bounded: a code from last week, behind 60 newer messages, no longer blocks its digits."""
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    now_ms = int(time.time() * 1000)
    week = 7 * 86_400_000
    inbox = phone.tables["content://sms/inbox"]
    inbox.clear()
    inbox.append({"_id": "9", "address": "22000", "body": "G-730 551 is your Google verification code.",
                  "date": str(now_ms - week), "read": "1"})
    inbox.extend(_flood(now_ms - week + 1000, "messages"))
    async with connect(server, "legacy", Answers("yes")) as c:
        r = await c.call_tool("sms_send", {"to": "+15550666", "body": "7 3 0 5 5 1"})
    assert not r.is_error, r.content[0].text
