"""A raw reading from a source, before any scope or redaction is applied."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from sentinel_mcp.core.sensor_kinds import SensorKind


class Reading(BaseModel):
    sensor: SensorKind
    values: dict[str, Any]  # full-precision fields, named as in the SensorResponse payload
    taken_at: float  # epoch seconds when the source produced it
    source: str  # "simulated", "adb:<serial>", "termux"
