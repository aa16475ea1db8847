"""The lean HTTP path's dispatch context (``app/one_exchange_context.py``) does what the SDK's
``_SingleExchangeDispatchContext`` did as the lean path made it (no sink, no progress token), and makes its
``cancel_requested`` event only when read: one per call, never shared, unset."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest
from mcp.server._streamable_http_modern import _SingleExchangeDispatchContext
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext

from sentinel_mcp.app.one_exchange_context import OneExchangeContext
from sentinel_mcp.gateway import quick_event


@pytest.fixture
def counting() -> Iterator[Callable[[], list[Any]]]:
    kept = list(quick_event._EVENT)

    def start() -> list[Any]:
        made: list[Any] = []
        quick_event.new_event()
        real = quick_event._EVENT[0]

        def counted() -> Any:
            made.append(real())
            return made[-1]

        quick_event._EVENT[0] = counted
        return made

    yield start
    quick_event._EVENT[:] = kept


def _args(rid: Any) -> tuple[Any, Any, Any]:
    return (TransportContext(kind="streamable-http", can_send_request=False, headers=None), rid,
            ServerMessageMetadata(request_context=None))


def _both(rid: Any) -> tuple[Any, Any]:
    transport, rid, meta = _args(rid)
    sdk = _SingleExchangeDispatchContext(transport=transport, request_id=rid, message_metadata=meta)
    return sdk, OneExchangeContext(transport, rid, meta)


@pytest.mark.parametrize("rid", [0, 7, "a", "\u202e", 2**53])
def test_it_answers_as_the_sdks_context(rid: Any) -> None:
    async def main() -> None:
        sdk, ours = _both(rid)
        names = ("transport", "request_id", "message_metadata", "progress_token", "sink", "can_send_request")
        for name in names:
            assert getattr(ours, name) == getattr(sdk, name), name
        for ctx in (sdk, ours):
            assert await ctx.notify("notifications/message", {"level": "info", "data": "x"}) is None
            assert await ctx.progress(0.5, 1.0, "half") is None
            with pytest.raises(NoBackChannelError):
                await ctx.send_raw_request("sampling/createMessage", {})
            assert not ctx.cancel_requested.is_set()

    anyio.run(main)


def test_the_event_is_made_when_read_one_per_call(counting: Callable[[], list[Any]]) -> None:
    async def main() -> None:
        made = counting()
        alice, bob = OneExchangeContext(*_args(1)), OneExchangeContext(*_args(2))
        assert made == []
        first = alice.cancel_requested
        assert alice.cancel_requested is first and bob.cancel_requested is not first
        first.set()
        assert not bob.cancel_requested.is_set() and len(made) == 2
        with pytest.raises(AttributeError):
            alice.stray = 1  # type: ignore[attr-defined]

    anyio.run(main)

