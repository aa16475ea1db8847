"""The client's lone call line, served as the pipe gives it (``stdio_transport._FrontTake``) only while the
stdin loop sleeps at its read with nothing unread: any other line, or a line arriving while the loop is busy
(handing a message to the SDK, waiting for room), is left to the loop, in order, with the loop's own checks (a
repeated id is refused there). A real asyncio reader; a stand-in for the lean calls."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from sentinel_mcp.gateway.in_flight_requests import InFlightRequests
from sentinel_mcp.gateway.stdio_transport import _FrontTake, _Lines, _take_at_once
from sentinel_mcp.gateway.stdio_wire_out import WireOut


class _Lean:
    def __init__(self) -> None:
        self.taken: list[Any] = []

    def take(self, message: dict[str, Any]) -> bool:
        self.taken.append(message.get("id"))
        return True


def _call(rid: int) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                        "params": {"name": "tb__noop", "arguments": {}}}) + "\n").encode()


def _rig() -> tuple[asyncio.StreamReader, _Lean, InFlightRequests, WireOut, int, int]:
    reader = asyncio.StreamReader(limit=4 * 64 * 1024)
    lean, in_flight = _Lean(), InFlightRequests()
    r, w = os.pipe()
    out = WireOut(w)
    _take_at_once(reader, _FrontTake(reader, _Lines(), lean, in_flight, out))  # type: ignore[arg-type]
    return reader, lean, in_flight, out, r, w


def test_a_lone_call_is_taken_only_while_the_loop_sleeps_at_its_read() -> None:
    async def main() -> None:
        reader, lean, in_flight, out, r, w = _rig()
        try:
            reader.feed_data(_call(1))  # nobody at the read (the loop busy): left for the loop
            assert lean.taken == []
            assert await reader.read(65536) == _call(1)

            loop_read = asyncio.ensure_future(reader.read(65536))
            await asyncio.sleep(0)  # the loop asleep at its read
            reader.feed_data(_call(2))
            assert lean.taken == [2] and in_flight.repeats(json.loads(_call(2)))
            await asyncio.sleep(0)
            assert not loop_read.done()  # not woken: nothing for it

            reader.feed_data(_call(2))  # the same id again, in flight: the loop refuses it, not the lean path
            assert lean.taken == [2]
            reader.feed_data(_call(3))  # behind unread bytes: in order, through the loop
            assert lean.taken == [2]
            assert await loop_read == _call(2) + _call(3)
        finally:
            out.close()
            os.close(r)
            os.close(w)

    asyncio.run(main())


def test_two_lines_a_part_of_one_or_a_bad_line_go_to_the_loop() -> None:
    async def main() -> None:
        reader, lean, _, out, r, w = _rig()
        try:
            for data in (_call(4) + _call(5), _call(6)[:20], b"{not json\n", b"\n"):
                loop_read = asyncio.ensure_future(reader.read(65536))
                await asyncio.sleep(0)
                reader.feed_data(data)
                assert await loop_read == data
            assert lean.taken == []
        finally:
            out.close()
            os.close(r)
            os.close(w)

    asyncio.run(main())
