"""One HTTP exchange over a raw socket, for tests of what a front writes itself (no client library
between)."""

from __future__ import annotations

import asyncio

Headers = dict[bytes, list[bytes]]


async def raw_exchange(port: int, request: bytes, whole: bool = False) -> tuple[int, Headers, bytes]:
    """``request``'s answer: status, headers (names lower-cased, each value list in order) and body: its
    Content-Length's bytes, or with ``whole`` all until the peer closes (none after a 101)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60)
        lines = head[:-4].split(b"\r\n")
        status = int(lines[0].split(b" ")[1])
        headers: Headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers.setdefault(name.strip().lower(), []).append(value.strip())
        if whole:
            body = b"" if status == 101 else await asyncio.wait_for(reader.read(), 60)
        else:
            length = 0 if request.startswith(b"HEAD ") else int(headers.get(b"content-length", [b"0"])[0])
            body = await asyncio.wait_for(reader.readexactly(length), 60)
        return status, headers, body
    finally:
        writer.close()
