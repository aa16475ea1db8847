"""How a request leaves the lean HTTP client's pool (gateway/lean_http.py, ``HttpPool.request``), against a
raw server on 127.0.0.1: whatever ends a request - an error in the caller's hands, a broken answer, a caller
cancelled while it waits - gives its slot back and closes its connection (never kept for another request),
and the other requests made beside it get their own answers. Counted, no timings: more requests than the
pool has slots each ending so would wait forever for a slot if one were kept."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sentinel_mcp.gateway.lean_http import MAX_CONNECTIONS, HttpFault, HttpPool
from tests.gateway.test_lean_http import OK, RawServer, _with

pytestmark = pytest.mark.timeout(60)

ROUNDS = MAX_CONNECTIONS + 6


class Boom(Exception):
    pass


def test_an_error_in_the_callers_hands_closes_the_connection_and_frees_its_slot() -> None:
    async def body(pool: HttpPool, server: RawServer) -> Any:
        for _ in range(ROUNDS):
            with pytest.raises(Boom):
                async with asyncio.timeout(10):
                    async with pool.request("POST", b"{}", {}) as answer:
                        assert answer.status == 200
                        raise Boom
        return server.connections, len(pool._idle)

    connections, idle = asyncio.run(_with([OK], body))
    assert connections == ROUNDS and idle == 0  # each connection closed, none reused


def test_a_broken_answer_frees_its_slot() -> None:
    async def cut(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n{}")
        await writer.drain()
        writer.close()

    async def body(pool: HttpPool, server: RawServer) -> Any:
        faults = 0
        for _ in range(ROUNDS):
            try:
                async with asyncio.timeout(10):
                    async with pool.request("POST", b"{}", {}) as answer:
                        async for _ in answer.body():
                            pass
            except HttpFault:
                faults += 1
        return faults, len(pool._idle)

    faults, idle = asyncio.run(_with([cut], body))
    assert faults == ROUNDS and idle == 0


def _answer(n: int) -> bytes:
    body = b'{"n":%d}' % n
    return b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)


class NumberServer(RawServer):
    """Answers each request with its own number (from its body), -1 for one without; request 1 never (it
    reads on until the client closes the connection)."""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                data = await reader.readexactly(length)
                self.requests.append(head + data)
                n = int(data.rsplit(b'"n":', 1)[1].rstrip(b"}")) if b'"n":' in data else -1
                if n == 1:
                    await reader.read()
                    return
                writer.write(_answer(n))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def test_a_caller_cancelled_while_waiting_closes_its_connection() -> None:
    """Three requests on three kept-alive connections, the second's caller cancelled while it waits for an
    answer that never comes: the others get their own answers, the cancelled one's connection is closed and
    not kept, the other two are."""
    async def run() -> Any:
        server = NumberServer([])
        listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        pool = HttpPool(f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}/mcp", {}, None, 5.0)

        async def call(n: int | None) -> bytes:
            data = b"{}" if n is None else b'{"n":%d}' % n
            async with pool.request("POST", data, {}) as answer:
                return b"".join([chunk async for chunk in answer.body()])

        try:
            async with asyncio.timeout(10):
                await asyncio.gather(*(call(None) for _ in range(3)))  # three connections kept
                second = pool._idle[-2]  # handed out from the end: the second call's
                tasks = [asyncio.create_task(call(n)) for n in range(3)]
                while len(server.requests) < 6:  # all three arrived
                    await asyncio.sleep(0.01)
                tasks[1].cancel()
                done = await asyncio.gather(*tasks, return_exceptions=True)
            return done, second.lost, second in pool._idle, len(pool._idle), server.connections
        finally:
            await pool.aclose()
            listener.close()

    done, lost, kept, idle, connections = asyncio.run(run())
    assert isinstance(done[1], asyncio.CancelledError)
    assert done[0] == b'{"n":0}' and done[2] == b'{"n":2}'
    assert lost and not kept and idle == 2 and connections == 3
