"""A row's time as the phone's provider printed it: an SMS's date, an event's start and end, an alarm's
trigger. Any app that writes the provider (the default SMS app, a calendar sync) chooses them: one odd row
must not fail the whole listing, and is never read in another script's digits."""

from __future__ import annotations

import time

import pytest
from tests.device.device_helpers import connect, sim_server

from device_tools.alarm_dump import parse_alarm_dump

pytestmark = pytest.mark.timeout(60)

# "²".isdigit() is True and int() refuses it; 5,000 digits pass int()'s limit; 30 digits are past any
# datetime; Arabic-Indic digits are read by int() as a time Android never printed
ODD = ["\u00b2", "9" * 5000, "9" * 30, "-" + "9" * 30, "\u0661\u0667" + "\u0660" * 7]


@pytest.mark.parametrize("date", ODD)
async def test_an_sms_with_an_odd_date_is_listed_without_a_time(tmp_path, date):
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    phone.tables["content://sms/inbox"].append(
        {"_id": "50", "address": "+15550666", "date": date, "read": "0", "body": "hello"}
    )
    async with connect(server) as c:
        r = await c.call_tool("sms_list", {"limit": 200})
    assert not r.is_error, r.content[0].text
    odd = [m for m in r.structured_content["messages"] if m["id"] == "50"]
    assert odd and odd[0]["date"] is None
    assert len(r.structured_content["messages"]) > 1  # the other messages are read as before


@pytest.mark.parametrize("when", ODD)
async def test_a_calendar_event_with_an_odd_time_is_skipped_or_shown_without_it(tmp_path, when):
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    start = str(int(time.time() * 1000) + 3_600_000)
    table = phone.tables["content://com.android.calendar/events"]
    table.append(
        {
            "_id": "70",
            "title": "Odd start",
            "dtstart": when,
            "dtend": start,
            "eventLocation": "",
            "description": "",
        }
    )
    table.append(
        {
            "_id": "71",
            "title": "Odd end",
            "dtstart": start,
            "dtend": when,
            "eventLocation": "",
            "description": "",
        }
    )
    async with connect(server) as c:
        r = await c.call_tool("calendar_list", {})
    assert not r.is_error, r.content[0].text
    events = {e["id"]: e for e in r.structured_content["events"]}
    assert "70" not in events  # a start that cannot be read is in no range
    assert events["71"]["end"] is None


@pytest.mark.parametrize("ms", ODD)
def test_an_alarm_with_an_odd_time_is_not_read(ms):
    nexts, _ = parse_alarm_dump(f"  Next alarm clock information:\n    user:0 pendingSend:false time:{ms}\n")
    assert nexts == []
