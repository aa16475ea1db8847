"""The front's transport holds a response head until its body (``app/http_protocol.HeadHoldingTransport``):
one send per answer, the same bytes in the same order, nothing held past the loop's turn or a close."""

from __future__ import annotations

import asyncio
from typing import Any

from sentinel_mcp.app.http_protocol import HeadHoldingTransport

HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-type: application/json\r\n\r\n"


class Recording:
    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.closed = self.aborted = False

    def write(self, data: Any) -> None:
        assert not self.closed
        self.sent.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = self.closed = True

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str) -> str:
        return f"info:{name}"


async def test_a_head_and_its_body_leave_in_one_write() -> None:
    real = Recording()
    t = HeadHoldingTransport(real, asyncio.get_running_loop())  # type: ignore[arg-type]
    t.write(HEAD)
    assert real.sent == [] and t.get_write_buffer_size() == len(HEAD)
    t.write(b"{}")
    assert real.sent == [HEAD + b"{}"]
    await asyncio.sleep(0)  # the turn's flush finds nothing held
    assert real.sent == [HEAD + b"{}"]


async def test_a_head_alone_leaves_on_the_loops_next_turn_and_streams_keep_their_order() -> None:
    real = Recording()
    t = HeadHoldingTransport(real, asyncio.get_running_loop())  # type: ignore[arg-type]
    t.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
    await asyncio.sleep(0)
    assert real.sent == [b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n"]
    for chunk in (b"data: 1\n\n", memoryview(b"data: 2\n\n"), bytearray(b"HTTP/1.1 x\r\n\r\n")):
        t.write(chunk)  # not bytes, or not a head: written at once
    assert real.sent[1:] == [b"data: 1\n\n", b"data: 2\n\n", b"HTTP/1.1 x\r\n\r\n"]


async def test_close_writes_what_is_held_and_abort_drops_it() -> None:
    loop = asyncio.get_running_loop()
    real = Recording()
    t = HeadHoldingTransport(real, loop)  # type: ignore[arg-type]
    t.write(HEAD)
    t.close()
    assert real.sent == [HEAD] and real.closed
    await asyncio.sleep(0)  # nothing is written after the close
    assert real.sent == [HEAD]
    other = Recording()
    t = HeadHoldingTransport(other, loop)  # type: ignore[arg-type]
    t.write(HEAD)
    t.abort()
    await asyncio.sleep(0)
    assert other.sent == [] and other.aborted
    assert t.get_extra_info("peername") == "info:peername"  # the rest is the transport's own


async def test_a_joined_heads_turn_is_called_off_and_the_next_head_still_leaves_on_its_own_turn() -> None:
    loop = asyncio.get_running_loop()
    real = Recording()
    ran: list[str] = []

    class Counting(HeadHoldingTransport):
        def flush(self) -> None:
            ran.append("flush")
            super().flush()

    t = Counting(real, loop)  # type: ignore[arg-type]
    for _ in range(3):  # answers on one kept-alive connection: each head joined to its body
        t.write(HEAD)
        t.write(b"{}")
    await asyncio.sleep(0)
    assert real.sent == [HEAD + b"{}"] * 3 and ran == []  # no turn of the loop was spent on them
    t.write(HEAD)  # a head whose body does not follow in the same turn
    await asyncio.sleep(0)
    assert real.sent[-1] == HEAD and ran == ["flush"]


async def test_a_head_whose_body_follows_books_no_turn() -> None:
    """``body_follows`` (the lean path's answer: its body is sent right after its head): the head is held and
    joined as before, without a ``call_soon`` and its cancellation; the flag is for that one head."""
    loop = asyncio.get_running_loop()
    booked: list[Any] = []
    real_call_soon = loop.call_soon

    def counting(*a: Any, **k: Any) -> Any:
        booked.append(a)
        return real_call_soon(*a, **k)

    real = Recording()
    t = HeadHoldingTransport(real, loop)  # type: ignore[arg-type]
    loop.call_soon = counting  # type: ignore[method-assign]
    try:
        for _ in range(3):
            t.body_follows = True
            t.write(HEAD)
            assert not t.body_follows and real.sent[-1:] != [HEAD]
            t.write(b"{}")
        assert booked == []
        t.write(HEAD)  # the next head, with nobody saying its body follows: its turn is booked again
        assert len(booked) == 1
    finally:
        del loop.call_soon
    await asyncio.sleep(0)
    assert real.sent == [HEAD + b"{}"] * 3 + [HEAD]


async def test_a_head_said_to_be_followed_is_still_written_by_close_and_dropped_by_abort() -> None:
    loop = asyncio.get_running_loop()
    real = Recording()
    t = HeadHoldingTransport(real, loop)  # type: ignore[arg-type]
    t.body_follows = True
    t.write(HEAD)
    t.close()
    assert real.sent == [HEAD] and real.closed
    other = Recording()
    t = HeadHoldingTransport(other, loop)  # type: ignore[arg-type]
    t.body_follows = True
    t.write(HEAD)
    t.abort()
    assert other.sent == [] and other.aborted


async def test_the_lean_answer_says_its_body_follows_and_leaves_no_flag_behind() -> None:
    from sentinel_mcp.app.lean_calls import _respond

    loop = asyncio.get_running_loop()
    real = Recording()
    t = HeadHoldingTransport(real, loop)  # type: ignore[arg-type]
    seen: list[bool] = []

    async def send(message: Any) -> None:  # as uvicorn writes them
        seen.append(t.body_follows)
        if message["type"] == "http.response.start":
            t.write(HEAD)
        else:
            t.write(message["body"])

    await _respond(send, 200, b"{}", t)
    assert seen == [True, False] and real.sent == [HEAD + b"{}"] and t._flushing is None

    async def refusing(message: Any) -> None:  # a connection gone: nothing written, an error
        raise RuntimeError("gone")

    try:
        await _respond(refusing, 200, b"{}", t)
    except RuntimeError:
        pass
    assert not t.body_follows  # the next head books its turn as usual
    t.write(HEAD)
    assert t._flushing is not None
