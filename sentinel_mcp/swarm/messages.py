"""Message shapes the agents exchange (the design's Critic and Verifier outputs)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Severity = Literal["BLOCKER", "MAJOR", "MINOR"]
# what a model's verdict or report may put in the audit (each attempt's row, every status read): its schema
# asks for 3 items of 160 characters; a backend that was only shown the schema could send thousands
MAX_MODEL_ITEMS = 5
MAX_MODEL_ITEM_CHARS = 300


def _first_items(value: Any) -> Any:
    """The first ``MAX_MODEL_ITEMS`` of a model's list, texts cut to ``MAX_MODEL_ITEM_CHARS``."""
    if not isinstance(value, list):
        return value
    return [v[:MAX_MODEL_ITEM_CHARS] if isinstance(v, str) else v for v in value[:MAX_MODEL_ITEMS]]


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

    @classmethod
    def from_model(cls, data: Any) -> CriticVerdict:
        """A model's verdict, its issues bounded (the checks' own findings, made here, are not cut); its
        decision and issues only (``warning`` is Sentinel's, set when the critic fails open: a model's there
        read as Sentinel's words)."""
        if isinstance(data, dict):
            data = {k: data[k] for k in ("decision", "issues") if k in data}
        if isinstance(data, dict) and isinstance(data.get("issues"), list):
            data = dict(data, issues=[
                {k: v[:MAX_MODEL_ITEM_CHARS] if isinstance(v, str) else v for k, v in i.items()}
                if isinstance(i, dict) else i
                for i in _first_items(data["issues"])
            ])
        return cls.model_validate(data)


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
                    first = data[k][:MAX_MODEL_ITEMS]
                    data[k] = _first_items([x if isinstance(x, str) else str(x) for x in first])
        return data
