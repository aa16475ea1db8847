"""A client that goes while its request's body is still coming, just before the answer goes out, is no fault
of the app (red team "rt-wire5", found by tests/records/test_fuzz_concurrent.py: "OSError: [Errno 107]
Transport endpoint is not connected" in ``write_eof``, an "Exception in ASGI application" with its traceback
per such request; /a2a answers a body cut short at once).

An answer sent before its body was read whole ends the connection (``http_protocol._linger``: what is
written, then the end of writing). The client's end reached the socket before the loop read it, the answer
written to it was reset, and the half close raised in the app's ``send``. Made certain here: the app itself
closes the client's socket (on 127.0.0.1 its end is at the server's socket when ``close`` returns), then
answers in the same turn of the loop."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

import pytest

from sentinel_mcp.app.http_protocol import FrontHTTPProtocol
from tests.support.served_app import served_app

pytestmark = pytest.mark.timeout(60)


async def test_a_reset_before_the_answer_is_no_fault(caplog: pytest.LogCaptureFixture) -> None:
    client = socket.socket()
    answered = asyncio.Event()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        first = await receive()
        assert first.get("more_body") and first["body"]  # the body is not read whole
        client.close()  # gone: its end is at the server's socket now, and what is written to it is reset
        await send({"type": "http.response.start", "status": 400,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"{}"})
        answered.set()

    caplog.set_level(logging.INFO)
    async with served_app(lambda port: app, http=FrontHTTPProtocol, log_level="info",
                          log_config=None) as port:
        client.connect(("127.0.0.1", port))
        client.sendall(b"POST /a2a HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                       b"content-length: 1000\r\n\r\n" + b"{" * 10)
        await asyncio.wait_for(answered.wait(), 30)
        await asyncio.sleep(0.1)  # uvicorn's lines about the request, if any, are written by now
    text = "\n".join(f"{r.levelname} {r.name} {r.getMessage()}" for r in caplog.records)
    assert "Exception in ASGI application" not in text and "Transport endpoint" not in text, text[-3000:]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], text[-3000:]
