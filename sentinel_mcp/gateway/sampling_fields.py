"""What of an upstream's sampling request reaches the client: the fields MCP defines for the model to write,
each within what the operator's user pays for and the client can show.

An upstream's request was relayed with its fields as sent: ``maxTokens`` 10^9 (the client's model writes, the
user's quota pays), ``metadata`` (an object the client may hand its model's provider as it is: provider
options, another user's id), a ``task`` (a task on the client that Sentinel never follows, not the
result it waits for), ``_meta`` keys meant for the client, a temperature of 1e300, thousands of stop sequences
and model hints. So a relayed request is rebuilt from an allow list (messages, system prompt, tools and tool
choice, shown by ``relayed_sampling``; the others here): ``maxTokens`` at most the server's
``max_sampling_tokens`` (a request over it asks for that many: MCP lets a client write fewer), a temperature
within 0..2 or none (the client's own), at most ``MAX_STOP_SEQUENCES`` short stop sequences and
``MAX_HINTS`` model hints whose names read as written, priorities within 0..1; ``includeContext`` "none"
(``relayed_sampling`` says why); ``metadata``, ``task`` and ``_meta`` dropped. Every relay path narrows here:
a handshake-era upstream's push (``upstream_relays``), a 2026-era upstream's input requests
(``upstream_rounds``), whichever era the client speaks.
"""

from __future__ import annotations

import math
from typing import Any

from mcp.types import CreateMessageRequest, CreateMessageRequestParams, ModelHint, ModelPreferences

from sentinel_mcp.core.display_text import is_hidden

DEFAULT_MAX_SAMPLING_TOKENS = 4096  # a long answer; a server's ``max_sampling_tokens`` sets its own
MAX_STOP_SEQUENCES = 8
STOP_SEQUENCE_CHARS = 100
MAX_HINTS = 8
HINT_CHARS = 100
_KEPT = ("messages", "system_prompt", "tools", "tool_choice")  # the words the model reads: shown elsewhere


def token_cap(target: Any) -> int:
    """The most tokens a configured server's sampling request may ask for."""
    cap = getattr(target, "max_sampling_tokens", None)
    return cap if isinstance(cap, int) else DEFAULT_MAX_SAMPLING_TOKENS


def narrowed_sampling(params: CreateMessageRequestParams, max_tokens: int) -> CreateMessageRequestParams:
    """``params`` as relayed: the allow-listed fields, each within its bound (``max_tokens``: the server's
    cap)."""
    kept = {name: getattr(params, name) for name in _KEPT}
    return CreateMessageRequestParams(
        **kept,
        max_tokens=min(max(params.max_tokens, 1), max_tokens),
        include_context="none" if params.include_context is not None else None,
        temperature=_within(params.temperature, 2.0),
        stop_sequences=_stop_sequences(params.stop_sequences),
        model_preferences=_preferences(params.model_preferences),
    )


def narrowed_requests(requests: dict[str, Any] | None, max_tokens: int) -> dict[str, Any] | None:
    """A 2026-era upstream's input requests with each sampling request narrowed (the others as they are)."""
    if not requests:
        return requests
    return {key: CreateMessageRequest(params=narrowed_sampling(r.params, max_tokens))
            if isinstance(r, CreateMessageRequest) else r for key, r in requests.items()}


def _within(value: float | None, top: float) -> float | None:
    """A number within 0..``top`` (a finite one), or None: the client's own choice."""
    return value if value is not None and math.isfinite(value) and 0.0 <= value <= top else None


def _reads_as_written(text: str, limit: int) -> bool:
    return 0 < len(text) <= limit and not any(is_hidden(ch) or not ch.isprintable() for ch in text)


def _stop_sequences(sequences: list[str] | None) -> list[str] | None:
    """The first few that a person reads as written: a stop sequence cuts what the model writes, so one the
    approving person cannot see (a hidden character) cuts it where no one expects."""
    if sequences is None:
        return None
    kept = [s for s in sequences[: MAX_STOP_SEQUENCES * 4] if _reads_as_written(s, STOP_SEQUENCE_CHARS)]
    return kept[:MAX_STOP_SEQUENCES]


def _preferences(preferences: ModelPreferences | None) -> ModelPreferences | None:
    if preferences is None:
        return None
    hints = None
    if preferences.hints is not None:
        hints = [ModelHint(name=h.name) for h in preferences.hints[: MAX_HINTS * 4]
                 if isinstance(h.name, str) and _reads_as_written(h.name, HINT_CHARS)][:MAX_HINTS]
    return ModelPreferences(
        hints=hints,
        cost_priority=_within(preferences.cost_priority, 1.0),
        speed_priority=_within(preferences.speed_priority, 1.0),
        intelligence_priority=_within(preferences.intelligence_priority, 1.0),
    )
