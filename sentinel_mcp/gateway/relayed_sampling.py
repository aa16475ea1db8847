"""An upstream's sampling request as the client gets it: over no context but its own, and marked as that
server's.

To the client, Sentinel is one server: its "this server's context" (``includeContext: "thisServer"``) is every
upstream's results, and ``"allServers"`` more still. A hostile upstream that asked for either had the client's
model read it everything the conversation had seen (other servers' results, secrets) and send it back in the
completion. So a relayed request asks for no context (the spec lets a client or a gateway narrow it), and its
system prompt starts with the mark of who asks, as a relayed question's text does: an upstream can copy
Sentinel's wording ("You are Sentinel..."), not this mark, which comes first. A built-in Sentinel mounted
asks as Sentinel (``source`` None): its request is left as it is.
"""

from __future__ import annotations

from mcp.types import CreateMessageRequestParams

from sentinel_mcp.core.display_text import compose, safe_text


def relayed_sampling(params: CreateMessageRequestParams, source: str | None) -> CreateMessageRequestParams:
    """``params`` as relayed for ``source`` (the server that asks; None: Sentinel's own built-in)."""
    if source is None:
        return params
    mark = compose("[This request comes from ", safe_text(source, 80),
                   " through Sentinel, not from Sentinel; it was given no context of the conversation.]")
    system = f"{mark}\n{params.system_prompt}" if params.system_prompt else mark  # the prompt: raw data
    context = "none" if params.include_context is not None else None
    return params.model_copy(update={"system_prompt": system, "include_context": context})
