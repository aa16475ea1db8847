"""The task specification: what app to build. Validated before anything else happens."""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from sentinel_mcp.core.errors import SwarmError
from sentinel_mcp.swarm.path_safety import reserved_name

_PACKAGE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")
_KOTLIN_KEYWORDS = {"as", "break", "class", "continue", "do", "else", "false", "for", "fun", "if", "in",
                    "interface", "is", "null", "object", "package", "return", "super", "this", "throw",
                    "true", "try", "typealias", "typeof", "val", "var", "when", "while"}
MIN_SDK_FLOOR = 21
# the package is a directory of every source path: its longest file, app/src/main/java/<package>/data/
# <24-character entity>Repository.kt, must stay within path_safety.MAX_PATH_CHARS (240)
MAX_PACKAGE_CHARS = 150
SDK_CEILING = 35


class SpecError(SwarmError, ValueError):
    """An invalid spec; the message lists every problem (field: what is wrong)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("invalid app spec:\n" + "\n".join(f"  {p}" for p in problems))
        self.problems = problems


class TaskSpec(BaseModel):
    """An Android app to generate."""

    # strict: JSON types as they are ("24" or 24.0 is no SDK level): what was sent is what is validated
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, strict=True)

    app_name: str = Field(min_length=1, max_length=50, description="human-readable app name")
    package_name: str = Field(description="Java/Kotlin package, e.g. com.example.notes")
    features: list[str] = Field(min_length=1, max_length=10, description="1-10 features, each a short phrase")
    min_sdk: int = Field(24, ge=MIN_SDK_FLOOR, le=SDK_CEILING)
    target_sdk: int = Field(34, ge=MIN_SDK_FLOOR, le=SDK_CEILING)
    architecture: Literal["MVVM", "MVP", "MVI"] = "MVVM"
    ui_system: Literal["Views", "Compose"] = "Views"
    description: str = Field("", max_length=2000)

    @field_validator("app_name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not re.match(r"^[A-Za-z][A-Za-z0-9 _-]*$", v):
            raise ValueError("must start with a letter and use only letters, digits, spaces, '_' or '-'")
        return v

    @field_validator("package_name")
    @classmethod
    def _package(cls, v: str) -> str:
        if not _PACKAGE.fullmatch(v):
            raise ValueError(
                "must be a lowercase dotted package with at least two parts, e.g. com.example.app"
            )
        if len(v) > MAX_PACKAGE_CHARS:
            raise ValueError(f"is too long for its files' paths (at most {MAX_PACKAGE_CHARS} characters)")
        bad = [p for p in v.split(".") if p in _KOTLIN_KEYWORDS]
        if bad:
            raise ValueError(f"uses Kotlin keyword(s) {', '.join(bad)} as package part(s)")
        devices = [p for p in v.split(".") if reserved_name(p)]
        if devices:
            raise ValueError(
                f"part(s) {', '.join(devices)} are device names Windows reserves (not a folder there)"
            )
        return v

    @field_validator("features")
    @classmethod
    def _features(cls, v: list[str]) -> list[str]:
        cleaned = [f.strip() for f in v]
        if any(not f for f in cleaned):
            raise ValueError("features must be non-empty strings")
        if any(len(f) > 200 for f in cleaned):
            raise ValueError("each feature must be at most 200 characters")
        lowered = [f.lower() for f in cleaned]
        if len(set(lowered)) != len(lowered):
            raise ValueError("features must be unique")
        return cleaned

    @model_validator(mode="after")
    def _sdks(self) -> TaskSpec:
        if self.target_sdk < self.min_sdk:
            raise ValueError(f"target_sdk ({self.target_sdk}) must be >= min_sdk ({self.min_sdk})")
        return self

    @property
    def package_path(self) -> str:
        return self.package_name.replace(".", "/")


def parse_spec(data: Any) -> TaskSpec:
    """Validate a spec (dict or JSON text); ``SpecError`` lists every problem by field."""
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as e:
            raise SpecError([f"not valid JSON (line {e.lineno} column {e.colno}): {e.msg}"]) from None
    if not isinstance(data, dict):
        raise SpecError(["the spec must be a JSON object"])
    try:
        return TaskSpec.model_validate(data)
    except ValidationError as err:
        problems = []
        for problem in err.errors():
            loc = ".".join(str(p) for p in problem["loc"]) or "(spec)"
            msg = problem["msg"].removeprefix("Value error, ")
            if problem["type"] == "extra_forbidden":
                msg = f"unknown field (known: {', '.join(TaskSpec.model_fields)})"
            problems.append(f"{loc}: {msg}")
        raise SpecError(problems) from None
