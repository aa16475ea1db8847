"""Alarms from ``dumpsys alarm`` (AOSP ``AlarmManagerService.dump``): Android has no provider to read them.

Two sections carry alarm clocks (what a clock app sets with ``setAlarmClock``):
- ``Next alarm clock information:`` then one line per user:
  ``    user:0 pendingSend:false time:1795340400000 = 2026-11-22 07:00:00 = +7h...``
- in the pending batches, each alarm clock has an ``Alarm clock:`` block with ``triggerTime=<date>`` under an
  ``RTC_WAKEUP #n: Alarm{... <package>}`` header.
The format is not a stable API: the parser is lenient (unknown lines are skipped, missing sections give an
empty list) and bounded. Labels and repeat days live in the clock app's private data: they are not here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from .android_time import epoch_ms, moment

MAX_ALARMS = 50
_NEXT = re.compile(
    r"^\s*user:([0-9]{1,9})\s+pendingSend:\S+\s+time:([0-9]+)(?: = (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}))?"
)
# the header's fixed words; the package, its last word before the closing brace, is cut with str.split: a lazy
# ".*?(\S+)\}" backtracked over the line, quadratic in a long one (the device's output, up to 4 MB)
_HEADER = re.compile(r"\s*(RTC_WAKEUP|RTC|ELAPSED_WAKEUP|ELAPSED)\s+#\d+:\s+Alarm\{\S+ type \d+ ")
# an Android package name (what an app that set an alarm is called); anything else in its place is not shown
_PACKAGE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+$")
_TRIGGER = re.compile(r"^\s*triggerTime=(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})")


@dataclass(frozen=True)
class AlarmClock:
    at: str  # local time on the phone, "YYYY-MM-DD HH:MM:SS"
    package: str | None  # the app that set it, when the dump says
    user: int | None = None
    epoch_ms: int | None = None

    def public(self) -> dict[str, object]:
        return {"at": self.at, "package": self.package, "user": self.user, "epoch_ms": self.epoch_ms}


def parse_alarm_dump(text: str) -> tuple[list[AlarmClock], list[AlarmClock]]:
    """(the next alarm clock per user, every alarm clock pending in the batches), each sorted by time."""
    nexts: list[AlarmClock] = []
    clocks: dict[tuple[str, str | None], AlarmClock] = {}
    package: str | None = None
    in_next = False
    for raw in text.splitlines()[:200_000]:
        line = raw.rstrip()
        if "Next alarm clock information" in line:
            in_next = True
            continue
        if in_next:
            m = _NEXT.match(line)
            if m:
                ms = epoch_ms(m.group(2)) or 0  # 0: no time (past a long, or past what a datetime holds)
                # the phone's own rendering of the time is in its time zone: prefer it
                if ms > 0 and moment(ms) is not None:
                    at = m.group(3) or _utc(ms)
                    nexts.append(AlarmClock(at=at, package=None, user=int(m.group(1)), epoch_ms=ms))
                continue
            if line.strip():
                in_next = False
        header = _HEADER.match(line)
        rest = line[header.end():].rstrip() if header else ""
        words = rest[:-1].split() if rest.endswith("}") else []
        if words:
            found = words[-1]
            package = found if len(found) <= 255 and _PACKAGE.fullmatch(found) else None
            continue
        trigger = _TRIGGER.match(line)
        if trigger and len(clocks) < MAX_ALARMS:
            clock = AlarmClock(at=trigger.group(1), package=package)
            clocks.setdefault((clock.at, clock.package), clock)
    return sorted(nexts, key=lambda a: a.at)[:MAX_ALARMS], sorted(clocks.values(), key=lambda a: a.at)


def _utc(ms: int) -> str:
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return str(ms)
