"""An upstream's sampling request as the client gets it: over no context but its own, and marked as that
server's.

To the client, Sentinel is one server: its "this server's context" (``includeContext: "thisServer"``) is every
upstream's results, and ``"allServers"`` more still. A hostile upstream that asked for either had the client's
model read it everything the conversation had seen (other servers' results, secrets) and send it back in the
completion. So a relayed request asks for no context (the spec lets a client or a gateway narrow it), and its
system prompt starts with the mark of who asks, as a relayed question's text does: an upstream can copy
Sentinel's wording ("You are Sentinel..."), not this mark, which comes first. A built-in Sentinel mounted
asks as Sentinel (``source`` None): its request is left as it is.

The client shows such a request to its user for approval (MCP's human in the loop), and the model reads it.
Characters a person cannot see (Unicode tags spelling ASCII, zero-width and bidi characters) let a server
write instructions the model reads and the approving person never sees, in its messages, its system prompt
or the tools it offers the model: there they are made visible (``⟨U+E0041⟩``), as in a tool's description
(``tool_words``), so both read the same. Nothing else of the request changes.
"""

from __future__ import annotations

from typing import Any

from mcp.types import CreateMessageRequestParams, SamplingMessage, TextContent, ToolResultContent

from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.gateway.tool_words import shown_tool, visible


def relayed_sampling(params: CreateMessageRequestParams, source: str | None) -> CreateMessageRequestParams:
    """``params`` as relayed for ``source`` (the server that asks; None: Sentinel's own built-in)."""
    if source is None:
        return params
    mark = compose("[This request comes from ", safe_text(source, 80),
                   " through Sentinel, not from Sentinel; it was given no context of the conversation.]")
    prompt = params.system_prompt
    system = f"{mark}\n{visible(prompt)}" if prompt else mark  # the prompt: its words, after the mark
    context = "none" if params.include_context is not None else None
    update: dict[str, Any] = {"system_prompt": system, "include_context": context,
                              "messages": [_shown_message(m) for m in params.messages]}
    if params.tools:
        update["tools"] = [shown_tool(t, t.name, source) for t in params.tools]
    return params.model_copy(update=update)


def _shown_block(block: Any) -> Any:
    """A message's block with its text made visible (a tool result's blocks too); others as they are."""
    if isinstance(block, TextContent):
        text = visible(block.text)
        return block if text == block.text else block.model_copy(update={"text": text})
    if isinstance(block, ToolResultContent):
        inner = [_shown_block(b) for b in block.content]
        same = all(a is b for a, b in zip(inner, block.content))
        return block if same else block.model_copy(update={"content": inner})
    return block


def _shown_message(message: SamplingMessage) -> SamplingMessage:
    """``message`` itself when nothing in it changes (the usual case: no copy per message)."""
    content = message.content
    if isinstance(content, list):
        blocks = [_shown_block(b) for b in content]
        if all(a is b for a, b in zip(blocks, content)):
            return message
        return message.model_copy(update={"content": blocks})
    block = _shown_block(content)
    return message if block is content else message.model_copy(update={"content": block})
