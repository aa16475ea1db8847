"""One decision log, read as one: what the built-ins recorded inside a gateway decision.

The gateway's audit log is the log; the device firewall's ``decisions.jsonl`` lines and the sensors' audit
rows
point to it by ``decision_id`` (``core/decision_record``). ``sentinel-mcp audit --decision ID`` shows the
gateway's rows of that decision and, after them, these records. Read only: a built-in's store that is missing
or cannot be read adds nothing (it is named in the problems instead).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from device_tools.sensors.database import DB_FILENAME, SensorDatabase
from sentinel_mcp.config import Config

MAX_LINES = 200_000  # a decisions file is append-only: read at most this many lines of it


def builtin_records(config: Config, decision_id: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The device's and the sensors' records of ``decision_id``, oldest first, and what could not be read."""
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    if not decision_id:
        return records, problems
    device = config.data_dir / "device" / "decisions.jsonl"
    try:
        records += _device_records(device, decision_id)
    except OSError as e:
        problems.append(f"device records ({device}): {e}")
    try:
        records += _sensor_records(config, decision_id)
    except Exception as e:  # noqa: BLE001 - a store that cannot be read adds nothing, and says so
        problems.append(f"sensors' records: {type(e).__name__}: {e}")
    return records, problems


def _device_records(path: Path, decision_id: str) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    found: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            if n >= MAX_LINES:
                break
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a torn last line
            if isinstance(row, dict) and row.get("decision_id") == decision_id:
                found.append({"area": "device", **row})
    return found


def _sensor_records(config: Config, decision_id: str) -> list[dict[str, Any]]:
    data_dir = config.data_dir / "sensors"
    if not config.store_url and not (data_dir / DB_FILENAME).exists():
        return []
    db = SensorDatabase(data_dir, config.store_url)
    try:
        rows = db.query("SELECT * FROM sensor_audit WHERE decision_id = ? ORDER BY id", [decision_id])
    finally:
        db.close()
    return [{"area": "sensors", **dict(r)} for r in rows]
