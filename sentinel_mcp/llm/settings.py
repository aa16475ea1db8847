"""``sentinel.llm`` settings: which model, how many threads, how big a context, how to sample."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sentinel_mcp.config import ConfigError


class LlmSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str | None = None  # a GGUF path; None: $SENTINEL_MODEL, then the small PyPI model package
    # 16K holds the largest input the tools accept (32,000 characters of context plus the query) and a
    # long answer; the model's own trained context caps it at load (a 4K model gets 4K)
    n_ctx: int = Field(16_384, ge=64, le=262_144, description="context window in tokens")
    n_threads: int | None = Field(None, ge=1, le=256, description="None: the number of CPU cores")
    n_batch: int = Field(512, ge=8, le=8192)
    # model layers offloaded to a GPU (llama.cpp's n_gpu_layers; -1: all of them); 0 here, where no GPU
    # exists.
    # A llama.cpp built without GPU support keeps every layer on the CPU; the model status says which it was.
    gpu_layers: int = Field(0, ge=-1, le=1024, description="layers offloaded to a GPU; -1: all; 0: CPU only")
    temperature: float = Field(0.2, ge=0.0, le=2.0)
    top_p: float = Field(0.95, gt=0.0, le=1.0)
    top_k: int = Field(40, ge=0, le=1_000_000)
    repeat_penalty: float = Field(1.1, ge=0.5, le=2.0)
    # llama.cpp's seed is 32 bits
    seed: int | None = Field(None, ge=0, le=2**32 - 1, description="fixed sampling seed, or None")
    max_tokens: int = Field(4096, ge=1, le=32_768, description="cap on max_tokens per call")
    # one generation's turn of the model, prompt evaluation included: past it the generation ends (free text
    # marked "time_limit", grammar output refused) and the model goes to the next party. 4,096 tokens of the
    # 270M model take ~100 s on 2 cores, a swarm's plan (2,000+ tokens) as long: a turn is bounded, never cut
    # short of what the built-in callers ask for on a slow machine
    max_generation_seconds: float = Field(
        300.0, gt=0, le=3600, allow_inf_nan=False, description="wall-clock bound of one generation"
    )
    # one step of llama.cpp's grammar sampler (the grammar's start, a token's mask), run in a child process
    # killed past it (grammar_process): a sound grammar's step takes milliseconds even over 262,144 tokens, a
    # grammar whose stacks multiply takes minutes; past it the grammar is refused and the model handed on
    grammar_step_seconds: float = Field(
        10.0, gt=0, le=600, allow_inf_nan=False, description="bound of one llama.cpp grammar-sampler step"
    )
    # a model file is first used in a child process (model_probe.py): the bound of that child's load, chat
    # template and one-token decode; a file it does not finish with is refused
    model_probe_seconds: float = Field(
        300.0, gt=0, le=3600, allow_inf_nan=False, description="bound of the model file's probe process"
    )
    max_query_chars: int = Field(2048, ge=16, le=1_000_000)
    max_context_chars: int = Field(32_000, ge=16, le=10_000_000)
    detect_injection: bool = True
    # "llguidance": token masks (fast); "llama_cpp": llama.cpp's own grammar sampler (the old path)
    grammar_sampler: Literal["llguidance", "llama_cpp"] = "llguidance"
    prefix_cache_mb: int = Field(
        256, ge=0, le=65_536, description="KV snapshots of shared prompt preambles; 0: off"
    )
    # turns of the model are shared round-robin between parties (principals, internal users); a call past
    # these bounds is refused at once, never queued without end
    max_queued_per_party: int = Field(4, ge=1, le=1024, description="calls one party may have waiting")
    max_queued: int = Field(64, ge=1, le=100_000, description="calls all parties may have waiting")

    @classmethod
    def from_section(cls, section: dict[str, Any] | None, where: str = "sentinel.llm") -> LlmSettings:
        """Validate the config section, turning pydantic errors into a ConfigError naming the key."""
        try:
            return cls.model_validate(section or {})
        except ValidationError as err:
            first = err.errors()[0]
            key = ".".join(str(p) for p in first["loc"]) or "(section)"
            raise ConfigError(f"{where}.{key}: {first['msg']}") from None
