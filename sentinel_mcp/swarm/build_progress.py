"""What a build's runner writes as it runs, signed on a server store (``signed_parts.py``, one MAC per part,
each written in the statement that writes the part): its plan, its report, its counters and warnings, its
error, each step it recorded and each model call it made, with a running count of each.

Nothing acts on these values (every cap is counted in the runner's memory, ``limits.Budget``): they are what
the build's principal and the operator are shown (``swarm_status``, ``swarm_list``, the console). Unsigned, a
database writer without the seal key could rewrite a build's plan, report or error, raise its counters past
the caps, clear a step's issues, or delete model-call rows to hide spend, and that was shown as the build's
own. A part that fails its check is withheld (``None``), named in ``unverified`` and logged. A deleted step or
model-call row is seen: each is numbered (``seq``, 1, 2, ...) and signed with its number, and the build's row
keeps a signed count of each (``steps_recorded``, ``calls_recorded``, written in the transaction that inserts
the row); rows of the signed count that no signed row answers are missing (``missing_rows``). An embedded
SQLite store is not signed (its readers trust the file, as its audit's do).
"""

from __future__ import annotations

import logging
from typing import Any

from sentinel_mcp.swarm.build_rows import end_verified
from sentinel_mcp.swarm.limits import HARD_MAX_MODEL_CALLS, HARD_MAX_RETRIES, HARD_MAX_STEPS
from sentinel_mcp.swarm.signed_parts import Part, checked

log = logging.getLogger(__name__)

_TASK = ("task_id",)
PLAN = Part("plan", "plan_mac", _TASK, ("plan_json",), (None,))
REPORT = Part("report", "report_mac", _TASK, ("report_json",), (None,))
COUNTERS = Part("counters", "counters_mac", _TASK,
                ("model_calls", "prompt_tokens", "completion_tokens", "warnings_json"), (0, 0, 0, "[]"))
ERROR = Part("error", "error_mac", _TASK, ("error",), (None,))
STEPS = Part("steps recorded", "steps_mac", _TASK, ("steps_recorded",), (0,))
CALLS = Part("calls recorded", "calls_mac", _TASK, ("calls_recorded",), (0,))
CAPS = Part("caps", "caps_mac", _TASK, ("caps_json",))  # what bound the build, written once at its start
TASK_PARTS = (PLAN, REPORT, COUNTERS, ERROR, STEPS, CALLS, CAPS)
# a row of ``steps`` / ``api_calls``, signed with its build and its number in the build
STEP = Part("step record", "record_mac", ("task_id", "seq"),
            ("step_number", "attempt", "file_path", "status", "issues_json", "warnings_json", "bytes",
             "sha256"),
            shown=("status", "issues_json", "warnings_json", "bytes", "sha256"))
CALL = Part("model call", "record_mac", ("task_id", "seq"),
            ("step_number", "role", "backend", "model", "status", "attempts", "prompt_tokens",
             "completion_tokens", "duration_ms", "error", "created_at"))
# a child table -> (its part, the task's count part)
LEDGERS = {"steps": (STEP, STEPS), "api_calls": (CALL, CALLS)}
# a build writes at most a row per attempt of each step and one per model call (its hard caps); twice that is
# read of a build, no more (rows planted in SQL past it: not read, said; a page or a status stays bounded)
MOST_ROWS = {"steps": 2 * HARD_MAX_STEPS * (1 + HARD_MAX_RETRIES), "api_calls": 2 * HARD_MAX_MODEL_CALLS}

SCHEMA = ";\n".join(
    [f"ALTER TABLE tasks ADD COLUMN IF NOT EXISTS {p.mac_column} TEXT" for p in TASK_PARTS]
    + ["ALTER TABLE tasks ADD COLUMN IF NOT EXISTS steps_recorded INTEGER NOT NULL DEFAULT 0",
       "ALTER TABLE tasks ADD COLUMN IF NOT EXISTS calls_recorded INTEGER NOT NULL DEFAULT 0"]
    + [f"ALTER TABLE {t} ADD COLUMN IF NOT EXISTS seq INTEGER" for t in LEDGERS]
    + [f"ALTER TABLE {t} ADD COLUMN IF NOT EXISTS record_mac TEXT" for t in LEDGERS]
)


def task_checked(key: bytes, row: dict[str, Any]) -> dict[str, Any]:
    """The build's row with each part that fails its check withheld and named in ``unverified``, and said.
    An ended build whose end no replica signed (marked FAILED or COMPLETED in SQL) keeps its state shown,
    ``end`` named in ``unverified``."""
    out = checked(key, TASK_PARTS, row)
    if row.get("state") in ("COMPLETED", "FAILED") and not end_verified(key, row):
        out["unverified"] = [*(out.get("unverified") or []), "end"]
    if out.get("unverified"):
        log.warning("swarm: build %s: %s not signed by this cluster (written outside Sentinel, or from "
                    "before it was signed): withheld", row.get("task_id"), ", ".join(out["unverified"]))
    return out


def rows_checked(key: bytes, table: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A build's steps or model calls (``LEDGERS``), each that fails its check withheld and marked (a row
    repeating a number already read is marked too: a signed row copied in SQL counts once)."""
    part = LEDGERS[table][0]
    seen: set[Any] = set()
    out = []
    for row in rows:
        one = checked(key, (part,), row)
        if "unverified" not in one and one.get("seq") in seen:
            one = dict(one, unverified=["repeated"])
        seen.add(one.get("seq"))
        out.append(one)
    bad = sum(1 for r in out if r.get("unverified"))
    if bad:
        log.warning("swarm: build %s: %d %s row(s) not signed by this cluster (edited, copied or planted "
                    "outside Sentinel, or from before they were signed): withheld", rows[0].get("task_id"),
                    bad, table)
    return out


def missing_rows(task: dict[str, Any], table: str, rows: list[dict[str, Any]]) -> int | None:
    """How many of the build's signed count of ``table`` rows no signed row answers (deleted in SQL); None
    when the count itself is not signed (the task names it in ``unverified``)."""
    count_part = LEDGERS[table][1]
    recorded = task.get(count_part.columns[0])
    if not isinstance(recorded, int):
        return None
    held = {r.get("seq") for r in rows if not r.get("unverified")}
    return sum(1 for seq in range(1, recorded + 1) if seq not in held)
