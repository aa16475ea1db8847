"""How much an upstream's sampling request may ask the client's model to read.

An upstream sends a sampling request during a call, and the client's model reads all of it (the user's
model, their quota). One of 10 MB, or of 10,000 messages, was relayed whole: to a handshake-era client at
once, or held in memory for a 2026-era client's next round (each of the ``MAX_PUSHES_WAITING`` an upstream
may have waiting). A request past either bound is relayed to no one: a handshake-era upstream is refused
(audited with its call, ``push_refusals``), a 2026-era upstream's result ends the call saying why. The bound
leaves room for a long conversation and a few images.
"""

from __future__ import annotations

from typing import Any

from mcp.types import CreateMessageRequest, CreateMessageRequestParams

MAX_SAMPLING_MESSAGES = 1_000
MAX_SAMPLING_BYTES = 4 * 1024 * 1024  # the request as JSON (its messages, system prompt, tools)
TOO_LARGE = "too_large"  # the refused push's cause (``push_refusals``)


def sampling_problem(params: CreateMessageRequestParams) -> str | None:
    """Why ``params`` is not relayed (too many messages, too large), or None."""
    count = len(params.messages)
    if count > MAX_SAMPLING_MESSAGES:
        return f"it holds {count} messages; at most {MAX_SAMPLING_MESSAGES} are relayed"
    size = len(params.model_dump_json(by_alias=True, exclude_none=True).encode())  # counted once it is few
    if size > MAX_SAMPLING_BYTES:
        return f"it is {size} bytes long; at most {MAX_SAMPLING_BYTES} are relayed"
    return None


def oversized_request(requests: dict[str, Any] | None) -> str | None:
    """Why a 2026-era upstream's input requests are relayed to no one (a sampling request past a bound), or
    None."""
    for request in (requests or {}).values():
        if isinstance(request, CreateMessageRequest):
            problem = sampling_problem(request.params)
            if problem is not None:
                return f"the upstream's sampling request is not relayed: {problem}"
    return None
