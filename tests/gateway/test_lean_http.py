"""The lean upstream calls' HTTP/1.1 client (gateway/lean_http.py) against a raw server on 127.0.0.1 that
answers each request with bytes a test chose: well-formed answers are read whole and their connection
reused; every broken, oversized, smuggling-shaped or unasked-for answer is an ``HttpFault`` and its connection
is never reused; a request header that could split the request is never sent."""

from __future__ import annotations

import asyncio
from typing import Any, Callable
from unittest import mock

import pytest

from sentinel_mcp.gateway.lean_http import MAX_HEAD_BYTES, HeaderRefused, HttpFault, HttpPool

pytestmark = pytest.mark.timeout(60)

OK = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"


class RawServer:
    """Answers the n-th request with ``answers[n]`` (bytes, or a callable writing to the stream)."""

    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers
        self.requests: list[bytes] = []
        self.connections = 0
        self.writers: list[asyncio.StreamWriter] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                self.requests.append(head + await reader.readexactly(length))
                answer = self.answers[min(len(self.requests), len(self.answers)) - 1]
                if callable(answer):
                    await answer(writer)
                else:
                    writer.write(answer)
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def _with(answers: list[Any], body: Callable[[HttpPool, RawServer], Any]) -> Any:
    server = RawServer(answers)
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    pool = HttpPool(f"http://127.0.0.1:{port}/mcp", {"authorization": "Bearer t"}, None, 5.0)
    try:
        return await body(pool, server)
    finally:
        await pool.aclose()
        listener.close()


async def _post(pool: HttpPool, headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    async with asyncio.timeout(10):
        headers = headers or {"content-type": "application/json"}
        async with pool.request("POST", b'{"x":1}', headers) as answer:
            body = b"".join([chunk async for chunk in answer.body()])
            return answer.status, answer.headers, body


def test_answers_are_read_whole_and_the_connection_is_reused() -> None:
    chunked = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
               b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
    interim = b"HTTP/1.1 100 Continue\r\n\r\n" + OK

    async def body(pool: HttpPool, server: RawServer) -> Any:
        got = [await _post(pool) for _ in range(4)]
        return got, server.connections, server.requests[0]

    got, connections, first = asyncio.run(_with([OK, chunked, interim, OK], body))
    assert [g[2] for g in got] == [b"{}", b"hello world", b"{}", b"{}"]
    assert got[1][1]["content-type"] == "text/event-stream"
    assert connections == 1
    assert first.startswith(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:")
    assert b"authorization: Bearer t\r\n" in first and first.endswith(b'content-length: 7\r\n\r\n{"x":1}')


def test_a_kept_connection_asks_asyncio_for_its_loop_on_no_answer() -> None:
    """Waiting for an answer's bytes finds the loop without ``asyncio.get_running_loop``: on 3.11 that is a
    ``getpid`` system call each time, ~1.2 a forwarded call (issue 21: strace of the HTTP 2026 row)."""

    async def body(pool: HttpPool, server: RawServer) -> Any:
        await _post(pool)  # the connection made (its set-up may ask), this thread's loop found once
        with mock.patch("asyncio.get_running_loop", wraps=asyncio.get_running_loop) as asked:
            got = [await _post(pool) for _ in range(20)]
        return got, asked.call_count, server.connections

    got, asked, connections = asyncio.run(_with([OK], body))
    assert [g[2] for g in got] == [b"{}"] * 20 and connections == 1
    assert asked == 0


def test_a_closing_answer_is_not_reused() -> None:
    close = b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}"

    async def body(pool: HttpPool, server: RawServer) -> Any:
        await _post(pool)
        await _post(pool)
        return server.connections

    assert asyncio.run(_with([close, OK], body)) == 2


async def _write_slowly(writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n{}")  # 8 bytes short, then gone
    await writer.drain()
    writer.close()


@pytest.mark.parametrize("answer, why", [
    (b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n", "Transfer-Encoding"),
    (b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: 2\r\n\r\n{}", "Content-Encoding"),
    (b"HTTP/1.1 200 OK\r\nx-big: " + b"a" * (MAX_HEAD_BYTES + 10) + b"\r\n\r\n", "head larger"),
    (b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}", "malformed"),
    (b"NOT HTTP AT ALL\r\n\r\n", "malformed"),
    (b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}HTTP/1.1 200 OK\r\n", None),  # smuggled extra answer
    (_write_slowly, "connection closed before the answer ended"),
    (b"HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n", "switched"),
])
def test_a_broken_answer_is_a_fault_and_its_connection_is_dropped(answer: Any, why: str | None) -> None:
    async def body(pool: HttpPool, server: RawServer) -> Any:
        try:
            first: Any = await _post(pool)
        except HttpFault as e:
            first = str(e)
        await asyncio.sleep(0.05)
        second = await _post(pool)  # a fresh connection answers
        return first, second, server.connections

    first, second, connections = asyncio.run(_with([answer, OK], body))
    if why is None:  # the first answer was whole; the bytes after it were nobody's: that connection is gone
        assert first[2] == b"{}"
    else:
        assert why in first, first
    assert second[2] == b"{}" and connections == 2


def test_bytes_arriving_on_an_idle_connection_end_it() -> None:
    async def body(pool: HttpPool, server: RawServer) -> Any:
        await _post(pool)
        server.writers[0].write(OK)  # an answer nobody asked for
        await server.writers[0].drain()
        await asyncio.sleep(0.1)
        second = await _post(pool)
        return second, server.connections

    second, connections = asyncio.run(_with([OK, OK], body))
    assert second[2] == b"{}" and connections == 2


@pytest.mark.parametrize("headers", [
    {"mcp-name": "tool\r\nx-injected: 1"}, {"x-a\r\nb": "v"}, {"mcp-name": "a\nb"}, {"mcp-name": "a\0b"},
    {"mcp-name": "price \u20ac"}, {"x-\u2028": "v"},
])
def test_a_header_that_could_split_the_request_is_never_sent(headers: dict[str, str]) -> None:
    async def body(pool: HttpPool, server: RawServer) -> Any:
        for _ in range(2):  # refused again: a refused header line is never kept (lean_http.header_lines)
            with pytest.raises(HeaderRefused, match="line break or NUL|not latin-1"):
                await _post(pool, headers)
        return server.requests

    assert asyncio.run(_with([OK], body)) == []


def test_kept_header_lines_are_the_lines_checked_each_time_and_bounded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``header_lines`` keeps the lines it checked: the bytes are those ``_checked`` gives, however often a
    header is sent and in whatever company; what ``_checked`` refuses is refused every time and never kept;
    the table stops at its bound (lines are then checked each time) and never keeps a long line."""
    from sentinel_mcp.gateway import lean_http

    monkeypatch.setattr(lean_http, "_LINES", {})
    monkeypatch.setattr(lean_http, "MAX_LINES_KEPT", 8)

    def checked_each_time(headers: dict[str, str]) -> bytes:
        return b"".join(lean_http._checked(k) + b": " + lean_http._checked(v) + b"\r\n"
                        for k, v in headers.items())

    good = [("accept", "application/json, text/event-stream"), ("mcp-name", "t"), ("mcp-name", "t "),
            ("Mcp-Name", "t"), ("x-\xe9", "caf\xe9"), ("mcp-param-a", ""), ("x-long", "v" * 600)]
    bad = [("mcp-name", "a\r\nb"), ("x\nb", "v"), ("mcp-name", "\u20ac"), ("x", "a\0b")]
    for round_ in range(3):
        for i in range(len(good)):
            headers = dict(good[i:] + good[:i])
            assert lean_http.header_lines(headers) == checked_each_time(headers)
            for name, value in bad:
                with pytest.raises(HeaderRefused):
                    lean_http.header_lines({**headers, name: value})
        for n in range(20):  # values that vary per call: the table fills to its bound, then stays there
            headers = {"mcp-param-n": str(n * 1000 + round_)}
            assert lean_http.header_lines(headers) == checked_each_time(headers)
    assert len(lean_http._LINES) == 8
    assert all(value == checked_each_time(dict([key])) for key, value in lean_http._LINES.items())
    assert not any(key in lean_http._LINES for key in bad) and ("x-long", "v" * 600) not in lean_http._LINES


def test_a_configured_header_that_names_a_request_header_is_left_out() -> None:
    async def body(pool: HttpPool, server: RawServer) -> Any:
        await _post(pool)
        return server.requests[0]

    async def run() -> bytes:
        server = RawServer([OK])
        listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]
        pool = HttpPool(f"http://127.0.0.1:{port}/mcp", {"Content-Length": "0", "Host": "evil", "X-Ok": "1"},
                        None, 5.0)
        try:
            return await body(pool, server)
        finally:
            await pool.aclose()
            listener.close()

    request = asyncio.run(run()).lower()
    assert request.count(b"content-length") == 1 and b"evil" not in request and b"x-ok: 1" in request


def test_trailers_never_change_the_answers_headers() -> None:
    """A chunked answer's trailer fields (after its last chunk) were merged into the headers the caller had
    read at the head (``content-type`` became ``application/json, text/event-stream``, a session id appeared
    after the answer): dropped now, as the front drops a request's trailers."""
    chunked = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
               b"2\r\n{}\r\n0\r\ncontent-type: text/event-stream\r\nmcp-session-id: planted\r\n\r\n")
    status, headers, body = asyncio.run(_with([chunked], lambda pool, _: _post(pool)))
    assert (status, body) == (200, b"{}")
    assert headers == {"content-type": "application/json", "transfer-encoding": "chunked"}, headers


STREAM_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def _stream_rest(rest: bytes | None, sent: asyncio.Event, closed: asyncio.Event | None = None) -> Any:
    """An event-stream answer whose first chunk comes at once and whose ``rest`` only once the caller left
    (``sent`` set by the test); None: the rest never comes. ``closed``: set once the client closed the
    connection (waited for)."""

    async def answer(writer: asyncio.StreamWriter) -> None:
        writer.write(STREAM_HEAD + b"5\r\nfirst\r\n")
        await writer.drain()
        await sent.wait()
        if rest is not None:
            writer.write(rest)
            await writer.drain()
        if closed is None:
            return
        reader = writer._reader  # type: ignore[attr-defined]  # the client's end of the connection
        while not reader.at_eof():
            await asyncio.sleep(0.01)
        closed.set()

    return answer


async def _first_chunk_then_leave(pool: HttpPool) -> bytes:
    async with asyncio.timeout(10), pool.request("POST", b'{"x":1}', {}) as answer:
        body = answer.body()
        try:
            return await anext(body)
        finally:
            await body.aclose()


async def _until(cond: Callable[[], bool]) -> None:
    async with asyncio.timeout(10):
        while not cond():
            await asyncio.sleep(0.01)


@pytest.mark.parametrize("rest, reused", [
    (b"6\r\n tail.\r\n0\r\n\r\n", True),  # the stream's end, read beside the caller: the connection kept
    (b"10000\r\n" + b"x" * 0x10000 + b"\r\n" * 2, False),  # more than DRAIN_BYTES left: closed
    (b"0\r\n\r\nHTTP/1.1 200 OK\r\n", False),  # bytes after the end: an answer nobody asked for
    (None, False),  # never ends: closed after DRAIN_SECONDS
])
def test_the_rest_of_an_answer_left_early_is_drained_within_bounds(
        rest: bytes | None, reused: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    import sentinel_mcp.gateway.lean_http as lean_http

    monkeypatch.setattr(lean_http, "DRAIN_SECONDS", 0.2)

    async def body(pool: HttpPool, server: RawServer) -> Any:
        sent, closed = asyncio.Event(), asyncio.Event()
        server.answers[0] = _stream_rest(rest, sent, None if reused else closed)
        first = await _first_chunk_then_leave(pool)
        sent.set()
        if reused:
            await _until(lambda: len(pool._idle) == 1)
        else:
            async with asyncio.timeout(10):
                await closed.wait()
            assert not pool._idle
        second = await _post(pool)
        return first, second[2], server.connections

    first, second, connections = asyncio.run(_with([None, OK], body))
    assert first == b"first" and second == b"{}"
    assert connections == (1 if reused else 2)


def test_closing_the_pool_ends_a_drain() -> None:
    async def body(pool: HttpPool, server: RawServer) -> Any:
        sent, closed = asyncio.Event(), asyncio.Event()
        server.answers[0] = _stream_rest(None, sent, closed)
        await _first_chunk_then_leave(pool)
        sent.set()
        await pool.aclose()
        async with asyncio.timeout(10):
            await closed.wait()
        return True

    assert asyncio.run(_with([None], body))


def test_a_whole_answer_is_taken_at_once_and_a_partial_one_is_read() -> None:
    """``whole()`` gives the body of an answer that has all arrived, the bytes ``body()`` yields, and leaves
    the connection as reading it to the end does (reused); an answer still arriving gives None (read it by
    ``body()``); ``lean_event_stream.read_bounded`` bounds both ways alike."""
    from mcp.shared.exceptions import MCPError

    from sentinel_mcp.gateway.lean_event_stream import read_bounded as _read_bounded

    chunked = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
               b"3\r\n{\"a\r\n5\r\n\":12}\r\n0\r\n\r\n")
    release = asyncio.Event()

    async def slowly(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 8\r\n\r\n{\"a\":")
        await writer.drain()
        await release.wait()
        writer.write(b"12}")
        await writer.drain()

    async def body(pool: HttpPool, server: RawServer) -> Any:
        seen = []
        for _ in range(2):  # a Content-Length answer and a chunked one, each all arrived with its head
            async with pool.request("POST", b"{}", {}) as answer:
                await asyncio.sleep(0.05)  # the rest of a whole answer in hand (no harm if it came already)
                seen.append(answer.whole())
                assert answer.whole() == b""  # taken: nothing left, as after body()'s end
        async with pool.request("POST", b"{}", {}) as answer:
            assert answer.whole() is None  # its body is still coming
            release.set()
            seen.append(await _read_bounded(answer, 8))
        for limit in (7, 8):  # over the bound and at it, whole
            async with pool.request("POST", b"{}", {}) as answer:
                await asyncio.sleep(0.05)
                if limit == 7:
                    with pytest.raises(MCPError, match="answer larger than 7 bytes"):
                        await _read_bounded(answer, limit)
                else:
                    seen.append(await _read_bounded(answer, limit))
        return seen, server.connections

    big = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 8\r\n\r\n{\"a\":12}"
    unsized = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n8\r\n{\"a\":12}\r\n0\r\n\r\n"
    seen, connections = asyncio.run(_with([big, chunked, slowly, unsized, unsized], body))
    assert seen == [b'{"a":12}', b'{"a":12}', b'{"a":12}', b'{"a":12}']
    assert connections <= 2  # reused after whole answers (the over-bound one closed its connection)
