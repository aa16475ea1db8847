"""MCP sampling: the calling client's own model answers (``sampling/createMessage``).

Only handshake-era connections can carry it (2026-07-28 has no server-to-client requests), and
only when the client declared the sampling capability; both are checked before a build starts.
"""

from __future__ import annotations

import warnings
from typing import Any

from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.types import ClientCapabilities, SamplingCapability, SamplingMessage, TextContent

from sentinel_mcp.swarm.backends.base import ErrorSink, ModelError, ModelReply, ModelRequest, estimate_tokens


def client_offers_sampling(session: Any) -> bool:
    try:
        return bool(session.check_client_capability(ClientCapabilities(sampling=SamplingCapability())))
    except Exception:  # noqa: BLE001 - an odd session object: no sampling
        return False


class SamplingBackend:
    name = "sampling"

    def __init__(self, session: Any, related_request_id: Any = None) -> None:
        self._session = session
        self._related = related_request_id

    async def complete(self, request: ModelRequest, on_error: ErrorSink) -> ModelReply:
        prompt = request.unconstrained_prompt()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # sampling is deprecated in 2026-07-28, still the 2025 way
                res = await self._session.create_message(
                    [SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
                    max_tokens=request.max_tokens, system_prompt=request.system,
                    related_request_id=self._related)
        except NoBackChannelError:
            on_error("no back channel for sampling")
            raise ModelError("the client cannot be asked for sampling on this connection") from None
        except MCPError as e:
            on_error(f"sampling error {e.code}: {e}")
            raise ModelError(f"the client's sampling failed: {e}") from None
        content = res.content
        text = content.text if isinstance(content, TextContent) else ""
        # sampling reports no usage: estimate so the token cap still holds
        return ModelReply(text=text, prompt_tokens=estimate_tokens(request.system + prompt),
                          completion_tokens=estimate_tokens(text), model=res.model or "client")

    async def aclose(self) -> None:
        return None
