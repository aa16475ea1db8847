"""``WireOut``: lines written by many calls at once reach the client whole and each once, also when the pipe
is full (a line's rest waits through the loop with the lock held, and a line behind it waits for the lock),
and nothing is left counted as waiting."""

from __future__ import annotations

import asyncio
import os
import threading

from sentinel_mcp.gateway.stdio_wire_out import WireOut


def _line(i: int) -> str:
    return f'{{"n": {i}, "pad": "' + "x" * (i * 997 % 70_000) + '"}'  # up to 70 kB: more than a pipe holds


def test_lines_written_at_once_reach_the_client_whole_even_through_a_full_pipe() -> None:
    r, w = os.pipe()
    got = bytearray()

    def read() -> None:  # a slow client: the pipe fills, and the writers wait for room
        while True:
            chunk = os.read(r, 4096)
            if not chunk:
                return
            got.extend(chunk)
            threading.Event().wait(0.0005)

    reader = threading.Thread(target=read)
    reader.start()

    async def main() -> WireOut:
        out = WireOut(w)
        await asyncio.wait_for(asyncio.gather(*(out.write(_line(i)) for i in range(60))), 60)
        return out

    out = asyncio.run(main())
    assert out.waiting == 0 and not out._lock.locked()
    out.close()
    os.close(w)
    reader.join(30)
    os.close(r)
    lines = bytes(got).split(b"\n")
    assert lines[-1] == b""
    assert sorted(lines[:-1]) == sorted(_line(i).encode() for i in range(60))  # whole, each once
