"""Calendar: list and create events through the CalendarContract provider."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult

from .. import commands as C
from ..actions import ProposedAction
from ..android_time import epoch_ms, iso_minutes
from ..arg_shapes import (MAX_CALENDAR_ID, MAX_DESCRIPTION, MAX_EVENT_MINUTES, MAX_LABEL, in_range,
                          label_text, text_arg)
from ..content_rows import read_rows
from ..device_words import quoted
from ..errors import DeviceError
from ..gate import Approval
from ..results import error_result, read_result
from ..runtime import DeviceRuntime
from ..ui_tools import ACT, READ, SELF_CONFIRMS, Result, finish

EVENTS = "content://com.android.calendar/events"
PROJECTION = ["_id", "title", "dtstart", "dtend", "eventLocation", "description"]


def parse_time(value: str, field: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(
            f"{field}: {value!r} is not an ISO 8601 date-time (e.g. 2026-11-23T09:30:00Z)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def register(mcp: MCPServer, rt: DeviceRuntime) -> None:
    # the owner's appointments, where the owner will be, an invitation's dial-in codes: the gateway asks the
    # user's consent, as for the contacts and the messages
    @mcp.tool(annotations=READ, meta={"sentinel/personal": "calendar"})
    async def calendar_list(
        start: str | None = None, days: int = 7, query: str | None = None
    ) -> CallToolResult:
        """Calendar events from `start` (ISO date-time, default now) for `days` days, optionally matching
        `query`."""
        try:
            begin = parse_time(start, "start") if start else datetime.now(UTC) - timedelta(hours=1)
            if not 1 <= days <= 366:
                raise ValueError("days must be between 1 and 366")
            rows = await read_rows(rt.gate.read, EVENTS, PROJECTION)  # an invitation's words: no other event
        except (ValueError, DeviceError) as exc:
            return error_result(str(exc))
        lo, hi = begin.timestamp() * 1000, (begin + timedelta(days=days)).timestamp() * 1000
        needle = (query or "").lower()
        events = []
        for r in rows:
            start = r.get("dtstart") or ""
            t = epoch_ms(start)
            if t is None or not lo <= t < hi:
                continue
            if (
                needle
                and needle not in f"{r.get('title')} {r.get('eventLocation')} {r.get('description')}".lower()
            ):
                continue
            events.append(
                {
                    "id": r["_id"],
                    "title": r.get("title"),
                    "start": iso_minutes(r.get("dtstart")),
                    "end": iso_minutes(r.get("dtend")),
                    "location": r.get("eventLocation"),
                    "description": r.get("description"),
                }
            )
        events.sort(key=lambda e: e["start"] or "")
        text = "\n".join(
            f"{e['start']} – {e['title']}" + (f" @ {e['location']}" if e["location"] else "") for e in events
        )
        return read_result(text or "no events in that range", {"events": events}, untrusted="calendar events")

    @mcp.tool(annotations=ACT, meta=SELF_CONFIRMS)
    async def calendar_create(
        title: str,
        start: str,
        ctx: Context,
        end: str | None = None,
        duration_minutes: int = 60,
        location: str = "",
        description: str = "",
        calendar_id: int = 1,
    ) -> Result:
        """Create a calendar event (ISO 8601 start/end; end defaults to start + duration_minutes)."""
        try:
            if not title.strip():
                raise ValueError("title must not be empty")
            # arg_shapes.py, mirrored by device.pl's guard of device__calendar_create
            if not (label_text(title) and label_text(location)):
                raise ValueError(f"title and location: at most {MAX_LABEL} characters on one line, no "
                                 "control character")
            if not text_arg(description, MAX_DESCRIPTION, lines=True):
                raise ValueError(f"description: at most {MAX_DESCRIPTION} characters, no control character "
                                 "but line breaks and tabs")
            if not in_range(calendar_id, 1, MAX_CALENDAR_ID):
                raise ValueError(f"calendar_id must be 1..{MAX_CALENDAR_ID}")
            if not in_range(duration_minutes, 1, MAX_EVENT_MINUTES):  # past it, timedelta overflows
                raise ValueError(f"duration_minutes must be 1..{MAX_EVENT_MINUTES}")
            begin = parse_time(start, "start")
            finish_at = parse_time(end, "end") if end else begin + timedelta(minutes=duration_minutes)
            if finish_at <= begin:
                raise ValueError("end must be after start")
        except ValueError as exc:
            return error_result(str(exc))
        binds = [
            ("calendar_id", "i", str(calendar_id)),
            ("title", "s", title),
            ("dtstart", "l", str(int(begin.timestamp() * 1000))),
            ("dtend", "l", str(int(finish_at.timestamp() * 1000))),
            ("eventTimezone", "s", "UTC"),
        ]
        if location:
            binds.append(("eventLocation", "s", location))
        if description:
            binds.append(("description", "s", description))
        argv = C.content_insert(EVENTS, binds)
        action = ProposedAction(
            kind="calendar_create",
            tool="calendar_create",
            text=title,
            details={"start": begin.isoformat(), "end": finish_at.isoformat(), "location": location},
        )

        async def run(approval: Approval) -> dict[str, Any]:
            output = (await rt.gate.run(argv, approval)).strip()
            if output:
                raise DeviceError(f"the calendar provider refused the event: {quoted(output, 300)}")
            return {"message": f"created event {title!r} at {begin.isoformat(timespec='minutes')}"}

        return await finish(rt, await rt.actuator.guarded(ctx, action, [argv], run), with_screen=False)
