"""DeviceSettings: the ``sentinel.device`` config section, validated."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .personal_apps import KIND, PACKAGE, SCREEN_PART
from .readable_config import ReadableNames


class DeviceSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["simulated", "adb", "termux"] = "simulated"
    serial: str | None = None  # adb: which device; None = the only one connected
    adb_host: str = "127.0.0.1"
    adb_port: int = Field(5037, ge=1, le=65535)
    confirm_timeout: float = Field(30.0, gt=0, le=600)  # seconds to wait for a confirmation; then deny
    physical_confirmation: bool = False  # True: risky actions wait for Volume Up instead of elicitation
    # "rules": RiskRules decide alone; "rules+model": llm__llm_classify_risk refines where model_role says
    # (when the llm built-in runs). true/false are the older spellings of "rules+model"/"rules".
    risk_classifier: bool | Literal["rules", "rules+model"] = "rules"
    risk_model_role: Literal["ambiguous", "flagged"] = "ambiguous"
    classifier_timeout: float = Field(20.0, gt=0, le=300)  # then the heuristics decide
    dump_attempts: int = Field(4, ge=1, le=10)
    dump_backoff: float = Field(0.3, ge=0, le=5)
    # sms_send: how long the messaging app's compose screen may take after the SENDTO intent (then: no tap)
    compose_timeout: float = Field(10.0, gt=0, le=60)
    terminal_timeout: float = Field(10.0, gt=0, le=120)
    terminal_output_cap: int = Field(16000, ge=256, le=1_000_000)
    terminal_allow: list[str] | None = (
        None  # replaces the default allow list ("getprop", "pm list packages", ...)
    )
    # app package (or a personal screen's resource id: personal_screens) -> the consent kind its screens need
    # (added to the defaults; "" takes one out)
    personal_apps: dict[str, str] = Field(default_factory=dict, max_length=500)
    # properties and settings keys terminal_run may read besides the built-in list (readable_config.py); the
    # gateway's guard gets them as config seeds
    readable: ReadableNames = Field(default_factory=ReadableNames)

    @field_validator("personal_apps")
    @classmethod
    def _apps(cls, apps: dict[str, str]) -> dict[str, str]:
        for package, kind in apps.items():
            if not (PACKAGE.fullmatch(package) or SCREEN_PART.fullmatch(package)):
                raise ValueError(f"{package!r} is not an Android package name (like com.example.app) nor a "
                                 "screen's resource id (like com.android.phone:id/cellinfo)")
            if kind and not KIND.fullmatch(kind):
                raise ValueError(f"{package}: kind {kind!r} must be lowercase letters, digits and _ "
                                 "(at most 40), or \"\" to take the app out")
        return apps

    def guard_seeds(self) -> dict[str, Any]:
        """The config seeds this section gives the guard (core/builtin.py SECTION_SEEDS names them)."""
        return self.readable.guard_seeds()


def load_settings(raw: dict[str, Any] | None, section: str = "device") -> DeviceSettings:
    from sentinel_mcp.config import ConfigError

    try:
        return DeviceSettings.model_validate(raw or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or "(section)"
        raise ConfigError(f"sentinel.{section}.{key}: {first['msg']}") from None
