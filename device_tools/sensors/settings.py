"""``sentinel.sensors`` settings, validated; a bad value is a ConfigError naming the key."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sentinel_mcp.config import ConfigError


class SensorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: Literal["simulated", "adb", "termux"] = "simulated"
    serial: str | None = None  # adb device serial; None = the only connected device
    adb_host: str = "127.0.0.1"
    adb_port: int = Field(5037, ge=1, le=65535)
    termux_bin_dir: str | None = None  # where termux-* live; None = $PATH
    command_timeout: float = Field(15.0, gt=0, le=300)
    default_retention: int = Field(
        300, ge=0, le=366 * 86_400, description="seconds a reading is kept when a request names none"
    )
    max_retention: int = Field(
        86_400, ge=0, le=366 * 86_400, description="longest retention a request may ask for"
    )
    sweep_interval: float = Field(30.0, gt=0, le=86_400, description="seconds between retention sweeps")
    consent_by_elicitation: bool = True  # ask the user when no consent is stored

    @model_validator(mode="after")
    def _retention_order(self) -> SensorSettings:
        if self.default_retention > self.max_retention:
            raise ValueError("default_retention must not exceed max_retention")
        return self

    @classmethod
    def from_section(cls, section: dict[str, Any] | None, where: str = "sentinel.sensors") -> SensorSettings:
        try:
            return cls.model_validate(section or {})
        except ValidationError as e:
            err = e.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            key = f"{where}.{loc}" if loc else where
            raise ConfigError(f"{key}: {err['msg']}") from None
