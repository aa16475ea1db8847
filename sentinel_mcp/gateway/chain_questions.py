"""The requests a 2026-era upstream has put to a 2026-era client over one call's chain of continuations.

Each input-required result is bounded (``midcall_answers.too_many_at_once``), but the client answers it in a
new request that continues the call, and the upstream may ask again there: 10 + 10 + ... over as many
continuations as it likes, every one shown to the person (a handshake-era client is asked within one call,
whose ``AcceptGate`` counts them). So the running count of each kind travels with the upstream's own request
state, inside Sentinel's sealed state (``input_rounds``: signed, so the client cannot lower it; used once, so
an older state replayed is refused, never counted afresh), and a result that would take a kind past
``MAX_QUESTIONS_PER_CALL`` over the chain is relayed to no one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sentinel_mcp.gateway.midcall_answers import MAX_QUESTIONS_PER_CALL
from sentinel_mcp.gateway.relay_permits import ALL, relay_kind

PREFIX = "sentinel.chain:"  # a state carried this way (any other is an upstream's own, with nothing asked)


@dataclass(frozen=True)
class Chain:
    """What one call's chain has asked so far, and the upstream's state it continues."""

    upstream: str | None = None
    asked: dict[str, int] = field(default_factory=dict)

    def after(self, requests: dict[str, Any] | None, upstream: str | None) -> Chain | str:
        """The chain once ``requests`` are relayed (the upstream's new ``upstream`` state), or why they are
        not (a kind past its bound)."""
        asked = dict(self.asked)
        for request in (requests or {}).values():
            kind = relay_kind(request)
            asked[kind] = asked.get(kind, 0) + 1
        for kind, count in sorted(asked.items()):
            if count > MAX_QUESTIONS_PER_CALL:
                return (f"the upstream asked for {count} {kind} requests over this call's continuations; a "
                        f"call may put at most {MAX_QUESTIONS_PER_CALL} of each to its client")
        return Chain(upstream, asked)

    def carried(self) -> str:
        """The state the front seals for the client's next request (``opened`` reads it back)."""
        return PREFIX + json.dumps({"upstream": self.upstream, "asked": self.asked}, separators=(",", ":"))


FRESH = Chain()  # a call's own first round (the common case): nothing asked, no state (``after`` copies)


def opened(state: str | None) -> Chain:
    """The chain a continuation's state carries (``Chain.carried``). Only Sentinel's sealed state brings one
    here; one that does not read as written is counted as full (nothing more is asked on it)."""
    if state is None:
        return FRESH
    if not isinstance(state, str) or not state.startswith(PREFIX):
        return Chain(state)
    try:
        data = json.loads(state[len(PREFIX):])
        upstream, asked = data["upstream"], data["asked"]
        if (upstream is None or isinstance(upstream, str)) and isinstance(asked, dict) and all(
            k in ALL and type(v) is int and v >= 0 for k, v in asked.items()
        ):
            return Chain(upstream, asked)
    except (ValueError, TypeError, KeyError):
        pass
    return Chain(None, {kind: MAX_QUESTIONS_PER_CALL for kind in ALL})
