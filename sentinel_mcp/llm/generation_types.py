"""What a generation is asked (``GenerationRequest``), what it gives (``Generation``) and the record of when
it held the model (``GenerationRecord``): the engine's data, apart from the engine (``engine.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

IN_PROCESS_PARTY = "sentinel:in-process"  # whom a generation is for when its in-process caller does not say


@dataclass
class GenerationRequest:
    messages: list[dict[str, str]]  # [{"role": "system"|"user"|"assistant", "content": ...}]
    max_tokens: int = 256
    temperature: float | None = None  # None: the settings' temperature
    grammar: str | None = None  # GBNF text
    grammar_label: str = "grammar"  # names the grammar in errors (file name or "json_schema")
    seed: int | None = None
    # the JSON Schema ``grammar`` was compiled from: the fast path compiles the schema itself
    json_schema: dict[str, Any] | None = None
    # who the generation is for: the caller's principal, or an internal user (``builtin:agent``); turns of
    # the model are shared fairly between parties
    party: str = IN_PROCESS_PARTY
    # the caller's credential check (``caller_check``): asked when the turn comes and before each chunk
    check: Callable[[], Any] | None = field(default=None, repr=False, compare=False)


@dataclass
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    # "stop" (natural end or grammar complete) | "length" (hit max_tokens) | "time_limit" (free text cut at
    # max_generation_seconds; grammar output cut so is refused, never returned)
    finish_reason: str
    model: str
    prompt_format: str  # "chat_template" | "plain"
    seconds: float
    first_token_seconds: float | None
    sampler: str = "none"  # "llguidance" | "llama_cpp" (grammar samplers) | "none" (free text)
    fallback_reason: str | None = None  # why a grammar did not use llguidance, when it did not
    # prompt tokens not evaluated (the party's own KV snapshot, or its own tokens still in the context)
    cached_prompt_tokens: int = 0


@dataclass
class GenerationRecord:
    """When a generation held the model: the evidence that generations never overlap."""

    started: float
    finished: float
    completion_tokens: int
    cancelled: bool
    party: str = IN_PROCESS_PARTY  # whom it ran for
