"""Wire shapes of a sensor request and its answer, exactly as the on-device agent design defines them.

A contract between areas: the sensors built-in (``device_tools.sensors``) answers them and the A2A participant
(``sensor_request``) carries them, and neither imports the other.
"""

from __future__ import annotations

import math
import unicodedata
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sentinel_mcp.core.sensor_kinds import MAX_RATE_HZ, Scope, SensorKind, parse_scope, parse_sensor


_UNSEEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})  # controls, format marks, separators


class SensorRequest(BaseModel):
    """``{"task_id", "sensor", "scope", "retention", "rate", "policy_tag"}`` (design: SensorRequest)."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(default="", max_length=200)
    sensor: SensorKind
    scope: Scope = Scope.minimal
    retention: int = Field(default=300, ge=0, description="seconds the reading may be kept; 0 = not stored")
    rate: float | None = Field(default=None, gt=0, description="samples per second the requester intends")
    policy_tag: str = Field(min_length=1, max_length=200, description="why the data is needed, for the audit")
    # a location fix older than this is refused; without it an old fix is served and said to be old
    max_age: int | None = Field(default=None, ge=0, le=10**9,
                                description="seconds: the oldest location fix the requester takes")

    @field_validator("sensor", mode="before")
    @classmethod
    def _sensor(cls, v: Any) -> Any:
        return parse_sensor(v) if isinstance(v, str) else v

    @field_validator("scope", mode="before")
    @classmethod
    def _scope(cls, v: Any) -> Any:
        return parse_scope(v) if isinstance(v, str) else v

    @field_validator("policy_tag")
    @classmethod
    def _purpose(cls, v: str) -> str:
        # audited and shown in the consent question: it must say something, on one line, as it reads (no
        # control, format or separator character such as a zero-width space or a direction mark)
        if not any(c.isprintable() and not c.isspace() for c in v) or any(
            unicodedata.category(c) in _UNSEEN for c in v
        ):
            raise ValueError("policy_tag must say why the data is needed in visible text on one line")
        return v

    @field_validator("rate")
    @classmethod
    def _finite(cls, v: float | None) -> float | None:
        if v is not None and math.isnan(v):
            raise ValueError("rate must be a number")
        return v

    def effective_rate(self) -> float:
        """The rate enforced for this requester: what it asked for, never above the sensor's maximum."""
        limit = MAX_RATE_HZ[self.sensor]
        if self.rate is not None and self.rate > limit:
            raise ValueError(f"rate {self.rate:g} Hz exceeds the {self.sensor.value} maximum of {limit:g} Hz")
        return self.rate or limit


class SensorResponse(BaseModel):
    """``{"task_id", "payload", "redactions", "timestamp"}`` (design: SensorResponse)."""

    task_id: str
    payload: dict[str, Any]
    redactions: list[str] = Field(default_factory=list)
    timestamp: str  # ISO 8601 UTC, "2025-10-18T12:00:00Z"


def iso_utc(epoch_seconds: float) -> str:
    return datetime.fromtimestamp(epoch_seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
