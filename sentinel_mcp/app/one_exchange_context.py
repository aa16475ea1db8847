"""The dispatch context of one lean 2026-07-28 HTTP call (``lean_calls.py``): the SDK's
``_SingleExchangeDispatchContext`` as the lean path made it (no SSE sink, no progress token, so its
notifications and progress reports go nowhere, as the SDK's do then; no back channel), with
``cancel_requested`` made when first read. Nothing on the lean path sets that event (a single exchange carries
no cancellation; a client that goes away does not cancel the call) and a handler rarely reads it, while making
it was four Python frames a call (issue 21)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.shared.dispatcher import CallOptions
from mcp.shared.message import MessageMetadata
from mcp.shared.transport_context import TransportContext

from sentinel_mcp.gateway.lazy_cancel_context import LazyCancelContext


class OneExchangeContext(LazyCancelContext):
    """``DispatchContext`` of one lean call (structurally, as the SDK's own)."""

    __slots__ = ("transport", "request_id", "message_metadata")
    progress_token = None
    sink = None

    def __init__(
        self, transport: TransportContext, request_id: Any, message_metadata: MessageMetadata
    ) -> None:
        self.transport = transport
        self.request_id = request_id
        self.message_metadata = message_metadata
        self._cancel = None

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        return None  # no response stream to carry it (the SDK's context without a sink)

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        return None  # no progress token (the SDK's context without one)
