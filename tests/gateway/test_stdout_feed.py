"""An stdio upstream's stdout reaches its reader as the pipe gives it (``stdout_feed.py``), in the order and
with the end the queued way gave: a real child process under anyio's asyncio backend, as the SDK spawns it."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import anyio
import pytest

from sentinel_mcp.gateway import stdout_feed
from sentinel_mcp.gateway.lean_stdio import TappedProcess

# lines of many sizes, written in pieces (a line split over writes, several lines in one), then an exit code
CHILD = r"""
import os, sys, time
out = sys.stdout.buffer
for i in range(400):
    line = (b"%d:" % i) + b"x" * ((i * 37) % 5000) + b"\n"
    if i % 3 == 0:
        out.write(line[:7]); out.flush(); out.write(line[7:])
    else:
        out.write(line)
    if i % 5 == 0:
        out.flush()
    if i % 50 == 0:
        time.sleep(0.01)
out.flush()
sys.exit(3)
"""


def _expected() -> bytes:
    return b"".join((b"%d:" % i) + b"x" * ((i * 37) % 5000) + b"\n" for i in range(400))


async def _spawn(code: str) -> Any:
    return await anyio.open_process([sys.executable, "-c", code])


def _feeds_from_read(process: Any) -> list[bool]:
    """For each read of stdout handed to its stream protocol: whether it came straight from the pipe
    transport's read (True) or from the loop's queue, a turn later (False)."""
    protocol = process._process._transport._protocol
    seen: list[bool] = []
    original = protocol.pipe_data_received

    def traced(fd: int, data: bytes) -> None:
        frame: Any = sys._getframe(1)
        direct = False
        while frame is not None:
            if frame.f_code.co_name == "_read_ready":
                direct = True
                break
            if frame.f_code.co_name == "_run":  # the loop's Handle: it came through the queue
                break
            frame = frame.f_back
        if fd == 1:
            seen.append(direct)
        original(fd, data)

    protocol.pipe_data_received = traced
    return seen


def test_stdout_reads_are_fed_at_once_in_order_and_before_the_end() -> None:
    async def main() -> None:
        process = await _spawn(CHILD)
        seen = _feeds_from_read(process)
        assert stdout_feed.feed_stdout_at_once(process)
        assert not stdout_feed.feed_stdout_at_once(process)  # once: a second hook would wrap the first
        got = b""
        while True:
            try:
                got += await process.stdout.receive(65536)
            except anyio.EndOfStream:
                break
        assert await process.wait() == 3
        assert got == _expected()  # every byte, in order, then the end
        assert seen and all(seen)  # every read fed from the pipe's own read, none a turn later

    asyncio.run(main())


def test_without_the_hook_reads_wait_a_turn() -> None:
    """What the hook takes away (the figure the test above holds at none)."""
    async def main() -> None:
        process = await _spawn(CHILD)
        seen = _feeds_from_read(process)
        got = b""
        while True:
            try:
                got += await process.stdout.receive(65536)
            except anyio.EndOfStream:
                break
        await process.wait()
        assert got == _expected()
        assert seen and not any(seen)

    asyncio.run(main())


def test_a_tapped_process_feeds_at_once_and_anything_else_is_left_alone() -> None:
    async def main() -> None:
        process = await _spawn("import sys; sys.stdout.write('a\\n' * 10)")
        seen = _feeds_from_read(process)
        tapped = TappedProcess(process)
        got = b""
        while True:
            try:
                got += await tapped.stdout.receive(65536)
            except anyio.EndOfStream:
                break
        await process.wait()
        assert got == b"a\n" * 10 and seen and all(seen)

        class Other:
            _process = object()

        assert not stdout_feed.feed_stdout_at_once(Other())
        assert not stdout_feed.feed_stdout_at_once(object())

    asyncio.run(main())


@pytest.mark.parametrize("pending", [True, False])
def test_before_the_transport_is_connected_reads_keep_the_queued_way(pending: bool) -> None:
    async def main() -> None:
        process = await _spawn("import sys; sys.stdout.write('b\\n')")
        transport = process._process._transport
        assert stdout_feed.feed_stdout_at_once(process)
        calls: list[Any] = []
        saved = transport._pending_calls
        if pending:  # as while its pipes are being connected: the read joins the pending calls, in order
            transport._pending_calls = calls_queue = __import__("collections").deque()
            transport._pipes[1].data_received(b"early\n")
            calls = list(calls_queue)
            transport._pending_calls = saved
            assert len(calls) == 1 and calls[0][1] == (1, b"early\n")
        got = b""
        while True:
            try:
                got += await process.stdout.receive(65536)
            except anyio.EndOfStream:
                break
        await process.wait()
        assert got == b"b\n"

    asyncio.run(main())
