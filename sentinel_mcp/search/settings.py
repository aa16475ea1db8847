"""``sentinel.search`` settings: which embedding model (if any), and the limits of the memory."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sentinel_mcp.config import ConfigError

DAY = 86_400.0
_CENTURY = 100 * 365 * DAY  # a bound: an expiry past it is "never", and a time that large overflows waits


class SearchSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # a GGUF embedding model for llama-cpp; None: the hashing-trick vectors (no model, deterministic)
    embedding_model: str | None = None
    embedding_threads: int | None = Field(None, ge=1, le=64)
    hashing_dim: int = Field(1024, ge=64, le=16_384)
    memory_ttl: float = Field(30 * DAY, gt=0, le=_CENTURY, description="default lifetime of a memory, s")
    memory_max_ttl: float = Field(365 * DAY, gt=0, le=_CENTURY)
    memory_max_chars: int = Field(4000, ge=16, le=100_000)
    memory_max_items: int = Field(10_000, ge=1, le=10_000_000, description="per principal; oldest go first")
    max_results: int = Field(20, ge=1, le=100)

    @classmethod
    def from_section(cls, section: dict[str, Any] | None) -> "SearchSettings":
        try:
            return cls.model_validate(section or {})
        except ValidationError as err:
            first = err.errors()[0]
            key = ".".join(str(p) for p in first["loc"]) or "(section)"
            raise ConfigError(f"sentinel.search.{key}: {first['msg']}") from None
