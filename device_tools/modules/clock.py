"""Clock: alarms and timers through the AlarmClock intents (SET_ALARM, SET_TIMER); the list from dumpsys."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult

from .. import commands as C
from ..actions import ProposedAction
from ..alarm_dump import parse_alarm_dump
from ..arg_shapes import MAX_LABEL, MAX_TIMER_S, day_name, in_range, label_text
from ..device_words import quoted
from ..errors import DeviceError
from ..gate import Approval
from ..results import error_result, read_result
from ..runtime import DeviceRuntime
from ..ui_tools import ACT, READ, SELF_CONFIRMS, Result, finish

EXTRA = "android.intent.extra.alarm."
DAYS = {"sun": 1, "mon": 2, "tue": 3, "wed": 4, "thu": 5, "fri": 6, "sat": 7}


def _started(output: str) -> None:
    if "Error" in output or "unable to resolve" in output:
        raise DeviceError(f"the clock app did not accept the intent: {quoted(output, 300)}")


def register(mcp: MCPServer, rt: DeviceRuntime) -> None:
    async def intent(
        ctx: Context, tool: str, argv: list[str], message: str, details: dict[str, Any]
    ) -> Result:
        action = ProposedAction(kind=tool, tool=tool, details=details)

        async def run(approval: Approval) -> dict[str, Any]:
            _started(await rt.gate.run(argv, approval))
            return {"message": message}

        return await finish(rt, await rt.actuator.guarded(ctx, action, [argv], run), with_screen=False)

    @mcp.tool(annotations=ACT, meta=SELF_CONFIRMS)
    async def alarm_set(
        hour: int, minute: int, ctx: Context, label: str = "", days: list[str] | None = None
    ) -> Result:
        """Set an alarm (24-hour clock). `days` repeats it, e.g. ["mon", "fri"]."""
        # arg_shapes.py, mirrored by device.pl's guard of device__alarm_set
        if not (in_range(hour, 0, 23) and in_range(minute, 0, 59)):
            return error_result("hour must be 0..23 and minute 0..59")
        if not label_text(label):
            return error_result(f"label: at most {MAX_LABEL} characters on one line, no control character")
        if days is not None and not all(day_name(d) for d in days):
            return error_result(f"days must be day names (mon, tue, ... or monday, ...); got {days!r}")
        extras = [
            ("--ei", EXTRA + "HOUR", str(hour)),
            ("--ei", EXTRA + "MINUTES", str(minute)),
            ("--ez", EXTRA + "SKIP_UI", "true"),
        ]
        if label:
            extras.append(("--es", EXTRA + "MESSAGE", label))
        if days:
            try:
                numbers = [str(DAYS[d.lower()[:3]]) for d in days]
            except KeyError:
                return error_result(f"days must be names like mon, tue, ...; got {days}")
            # `am` takes an int array as --eia KEY 1,2,3
            extras_argv = C.am_start("android.intent.action.SET_ALARM", extras=extras) + [
                "--eia",
                EXTRA + "DAYS",
                ",".join(numbers),
            ]
        else:
            extras_argv = C.am_start("android.intent.action.SET_ALARM", extras=extras)
        return await intent(
            ctx,
            "alarm_set",
            extras_argv,
            f"alarm set for {hour:02d}:{minute:02d}",
            {"hour": hour, "minute": minute, "label": label},
        )

    @mcp.tool(annotations=ACT, meta=SELF_CONFIRMS)
    async def timer_set(seconds: int, ctx: Context, label: str = "") -> Result:
        """Start a countdown timer of `seconds` (1..86400)."""
        if not in_range(seconds, 1, MAX_TIMER_S):
            return error_result(f"seconds must be 1..{MAX_TIMER_S}")
        if not label_text(label):
            return error_result(f"label: at most {MAX_LABEL} characters on one line, no control character")
        extras = [("--ei", EXTRA + "LENGTH", str(seconds)), ("--ez", EXTRA + "SKIP_UI", "true")]
        if label:
            extras.append(("--es", EXTRA + "MESSAGE", label))
        argv = C.am_start("android.intent.action.SET_TIMER", extras=extras)
        return await intent(
            ctx, "timer_set", argv, f"timer set for {seconds}s", {"seconds": seconds, "label": label}
        )

    @mcp.tool(annotations=READ)
    async def alarms_show() -> CallToolResult:
        """List the alarms set on the phone (times and the app that set them), read from `dumpsys alarm`
        (Android has no provider for alarms; labels and repeat days stay inside the clock app)."""
        try:
            dump = await rt.gate.read(C.ALARMS)
        except DeviceError as exc:
            return error_result(str(exc))
        if "Permission Denial" in dump or "Can't find service" in dump:
            return error_result("this backend cannot read the alarm list (`dumpsys alarm` needs adb's shell "
                                f"permissions): {quoted(dump)}")
        nexts, clocks = parse_alarm_dump(dump)
        lines = [f"next alarm: {nexts[0].at}" if nexts else "no alarm clock is set"]
        lines += [f"- {c.at} ({c.package or 'unknown app'})" for c in clocks]
        # package names and times come from the phone's dump: data, never instructions
        data = {"next": [n.public() for n in nexts], "alarms": [c.public() for c in clocks]}
        return read_result("\n".join(lines), data, untrusted="the phone's alarm list")
