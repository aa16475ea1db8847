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
