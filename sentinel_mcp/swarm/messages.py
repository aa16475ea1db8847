"""Message shapes the agents exchange (the design's Critic and Verifier outputs)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Severity = Literal["BLOCKER", "MAJOR", "MINOR"]


class Issue(BaseModel):
    model_config = ConfigDict(extra="ignore")

    severity: Severity = "MAJOR"
    message: str = Field(min_length=1, max_length=2000)
    file: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        # models say "description"/"issue"/"text" as often as "message"
        if isinstance(data, str):
            return {"message": data}
        if isinstance(data, dict):
            data = dict(data)
            if "message" not in data:
                for k in ("description", "issue", "text", "detail"):
                    if isinstance(data.get(k), str):
                        data["message"] = data[k]
                        break
            if isinstance(data.get("severity"), str):
                data["severity"] = data["severity"].strip().upper()
        return data

    def line(self) -> str:
        where = f" [{self.file}]" if self.file else ""
        return f"{self.severity}{where}: {self.message}"


class CriticVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    decision: Literal["ACCEPT", "REJECT"]
    issues: list[Issue] = Field(default_factory=list)
    warning: str | None = None  # set when the critic failed open

    @field_validator("decision", mode="before")
    @classmethod
    def _upper(cls, v: Any) -> Any:
        return v.strip().upper() if isinstance(v, str) else v


class VerifierReport(BaseModel):
    model_config = ConfigDict(extra="ignore")

    warnings: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    quality_score: float = Field(ge=0.0, le=1.0)

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if isinstance(data, dict) and "missing" not in data and isinstance(data.get("missing_items"), list):
            data = dict(data, missing=data["missing_items"])
        if isinstance(data, dict):
            data = dict(data)
            for k in ("warnings", "missing"):
                if isinstance(data.get(k), list):
                    data[k] = [x if isinstance(x, str) else str(x) for x in data[k]]
        return data
