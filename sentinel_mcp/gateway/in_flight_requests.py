"""A connection's requests not yet answered, by id, so that a request repeating an id still in flight is
refused instead of served.

The SDK's dispatcher keeps one in-flight entry per id and a repeated id overwrites it ("duplicate ids
blind-overwrite"): the older call can no longer be cancelled, and both answers go out under one id, so the
client cannot tell which is which (the newer call's answer may resolve the older call's wait). Ids are
compared as the dispatcher correlates them (``coerce_request_id``: ``5``, ``"5"``, ``"05"`` and ``"+5"`` are
one id), so no spelling slips past it.

An id is in flight from the moment its request is handed on until an answer with that id is about to be
written, or until the request settles unanswered (cancelled by the client). Where every message reaches the
dispatcher in the order it came (legacy SSE), a ``notifications/cancelled`` frees the id it names at once: the
dispatcher sees the cancellation before any later request. The stdio front serves its common calls beside
the dispatcher, so there a cancelled id is freed only once its call has settled.

Used by the stdio front (``stdio_transport``) and the legacy SSE front (``app/sse_backlog``); the 2025-era
streamable-HTTP front has its own check against the SDK's stream table (``app/in_flight_ids``).
"""

from __future__ import annotations

from typing import Any

from mcp.shared.dispatcher import coerce_request_id

from sentinel_mcp.core.wire_limits import INVALID_REQUEST, error_response

REPEATED = ("Invalid Request: a request with this id is still in flight on this connection (ids are told "
            "apart as the dispatcher tells them: 5, \"5\" and \"05\" are one); use another id")


def correlation_key(rid: Any) -> int | str | None:
    """The id as the dispatcher correlates it; None for what is no request id (the SDK takes a message with
    such an id as a notification, or refuses it)."""
    if isinstance(rid, bool) or not isinstance(rid, (int, str)):
        return None
    return coerce_request_id(rid)


class InFlightRequests:
    """One connection's (or session's) request ids in flight."""

    __slots__ = ("_ids",)

    def __init__(self) -> None:
        self._ids: set[int | str] = set()

    def __len__(self) -> int:
        return len(self._ids)

    def repeats(self, message: Any) -> bool:
        """Whether ``message`` is a request whose id is in flight already (it must be refused)."""
        if not isinstance(message, dict) or "method" not in message:
            return False
        key = correlation_key(message.get("id"))
        return key is not None and key in self._ids

    def handed_on(self, message: Any, *, cancelling: bool = False) -> None:
        """``message`` goes on to be served: a request's id is in flight from now. ``cancelling``: a
        cancellation frees the id it names (module doc: only where messages reach the dispatcher in order)."""
        if not isinstance(message, dict) or "method" not in message:
            return
        if message["method"] == "notifications/cancelled" and "id" not in message:
            params = message.get("params")
            if cancelling and isinstance(params, dict):
                self.answered(params.get("requestId"))
            return
        key = correlation_key(message.get("id"))
        if key is not None:
            self._ids.add(key)

    def answered(self, rid: Any) -> None:
        """An answer with id ``rid`` is about to be written, or its request settled without one."""
        key = correlation_key(rid)
        if key is not None:
            self._ids.discard(key)


def refusal(message: dict[str, Any]) -> dict[str, Any]:
    """The JSON-RPC error a request repeating an id in flight gets (under its own id)."""
    return error_response(message.get("id"), INVALID_REQUEST, REPEATED)
