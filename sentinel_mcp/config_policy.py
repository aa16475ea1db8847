"""``sentinel.policy``: how the guard decides when no rule does, its bounds and budgets (DESIGN §4)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

_WEEK = 7 * 86_400.0  # times are bounded: Python's waits raise OverflowError past ~9.2e9 s


class PolicySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    default: Literal["fail-safe", "allow", "deny"] = "fail-safe"
    allow: list[str] = Field(default_factory=list)  # glob patterns of catalog names always allowed
    deny: list[str] = Field(default_factory=list)  # glob patterns always denied
    confirm_ttl: float = Field(300.0, gt=0, le=_WEEK)  # seconds a confirmation stays valid
    guard_timeout: float = Field(10.0, gt=0, le=3600)
    # seconds a write waits for other conversations' writes it depends on, then denied (session_writes.py)
    write_turn_seconds: float = Field(60.0, gt=0, le=3600)
    # look-ups (bound read-only tool calls) one decision may make in all: a call whose arguments name
    # thousands of things cannot turn one decision into thousands of upstream calls (it is denied instead)
    max_fetches: int = Field(128, ge=1, le=100_000)
    # Built-ins trusted to confirm their own risky actions (their tools' _meta "sentinel/confirms"): the
    # fail-safe
    # default lets those tools through to the built-in's own risk check instead of asking first. Only names of
    # built-ins Sentinel mounts count; a configured upstream is never trusted this way.
    self_confirming: list[str] = Field(default_factory=lambda: ["device", "agent"])
    # each configured upstream's tools pinned as first seen; a later change of one is held until the owner
    # accepts it (``sentinel-mcp pins``; gateway/tool_pins.py). False: changes are served as listed
    pin_tools: StrictBool = True
    # calls a minute of every principal that sets none (never the owner's nor Sentinel's own); None: no limit
    calls_per_minute: int | None = Field(None, ge=1, le=1_000_000, strict=True)
    # goals typed by clients (sentinel_query) run in a separate worker process under these budgets
    query_seconds: float = Field(2.0, gt=0, le=60)
    query_inferences: int = Field(2_000_000, gt=0, le=2**63 - 1)  # what SWI-Prolog's inference limit holds
    query_memory_mb: int = Field(256, ge=16, le=8192)
    # goals of one principal waiting for the query worker (policy/query_turns.py); more are refused at once.
    # Each waiting goal holds its text and a task: bounded so no principal can queue without limit
    query_waiting_per_principal: int = Field(8, ge=1, le=256, strict=True)
