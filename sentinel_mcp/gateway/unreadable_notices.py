"""A notice the SDK's transports cannot read as a message (its method no string, its params no object): an
unfit notice like any other (``unfit_notices.py``), charged, counted and said at a cadence, never the end of
the call in flight.

The SDK's client transports parse each line or event as a JSON-RPC message; such a notice fails the parse.
Over stdio and the legacy SSE transport the failure was logged with its traceback and handed to the session
as an error, which failed every call waiting on the connection (``Upstream._on_garbage``: right for a line
that cannot be read at all, whose lost answer no one can name; wrong for a notice, which is read whole and
answers nothing). Over streamable HTTP an unreadable event in a call's stream ended that stream with an
error for the call ("Failed to parse SSE message"). The lean HTTP path read them as notices, unfit. Now:
``PacedReceive`` takes the stdio and SSE transports' failure apart (``notice_in``: the notice, if it was
one) and hands it to ``stray`` as the lean paths do, their log lines for it are dropped (``QuietNotices``);
the streamable HTTP transport's parse of an event (``EventReading``) gives an ``Unreadable`` in its place,
which ``PacedReceive`` hands to ``stray`` too. A line or body that is no notice goes on as before.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp.types import JSONRPCNotification
from pydantic import ValidationError

# the SDK's client transports that log a parse failure with its traceback before handing it on
TRANSPORT_LOGGERS = ("mcp.client.stdio", "mcp.client.sse")


class Unreadable(JSONRPCNotification):
    """Stands in for a notice the transport could not read (a type of Sentinel's: no upstream can send it)."""

    original: dict[str, Any] = {}


def notice_in(error: BaseException | None) -> dict[str, Any] | None:
    """The notice a transport's parse failed on (a JSON-RPC 2.0 object with a method and no id), from the
    pydantic error it raised (each member of the message union that misses a field was given the whole
    object); None if what failed was no notice (not JSON, an answer, a request)."""
    if not isinstance(error, ValidationError):
        return None
    for e in error.errors():
        whole = e.get("input")
        if e.get("type") == "missing" and isinstance(whole, dict):
            return whole if _a_notice(whole) else None
    return None


def _a_notice(msg: dict[str, Any]) -> bool:
    return msg.get("jsonrpc") == "2.0" and "method" in msg and "id" not in msg


class QuietNotices(logging.Filter):
    """Drops a transport's log line (with its traceback) for a notice it could not read: ``stray`` counts it
    and says it at a cadence."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and notice_in(record.exc_info[1]) is not None)


class EventReading:
    """The streamable HTTP transport's message reader (``jsonrpc_message_adapter``): an event's data (text)
    that is a notice it cannot read is an ``Unreadable``. A body (bytes: a request's whole answer) fails as
    before, so the request waiting for it learns at once."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def validate_json(self, data: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return self.inner.validate_json(data, *args, **kwargs)
        except ValidationError as e:
            notice = notice_in(e) if isinstance(data, str) else None
            if notice is None:
                raise
            return Unreadable(jsonrpc="2.0", method="", original=notice)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def read_quietly() -> None:
    """Once: the SDK's client transports read an unreadable notice as ``Unreadable`` or hand it on quietly."""
    from mcp.client import streamable_http

    if not isinstance(streamable_http.jsonrpc_message_adapter, EventReading):
        streamable_http.jsonrpc_message_adapter = EventReading(  # type: ignore[assignment]
            streamable_http.jsonrpc_message_adapter)
    for name in TRANSPORT_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, QuietNotices) for f in logger.filters):
            logger.addFilter(QuietNotices())

