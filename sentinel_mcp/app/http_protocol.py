"""The HTTP/1.1 protocol the front runs under uvicorn: httptools' C parser (llhttp), with h11's bound on the
size of a request head.

uvicorn's pure-Python h11 parser was about a sixth of the event loop's time per call under load
(benchmarks/README.md, branch i21-http); httptools parses the same requests in C. h11 refuses a request head
(request line and headers) larger than 16 KiB; uvicorn's httptools protocol has no such bound, and httptools
buffers an unfinished header field itself, so the bound is kept here on the bytes received while a head is
incomplete: past ``MAX_HEAD_BYTES`` the connection gets a 431 and is closed (memory held: the bound plus one
read); a head that arrived whole in one read is measured as parsed and refused with a 431 too. A request is
read in bounded time (``HEAD_SECONDS``, ``BODY_SECONDS``; 408 past them: slowloris). Each of these refusals
(and the parser's 400) is a JSON-RPC error for a client of a JSON-RPC route, and logged bounded
(``parse_refusals.py``). A client that ends its sending side (a half close) still gets every answer owed,
and a request that end cut short a 400; the connection ends after the last. A ``Transfer-Encoding``
other than ``chunked`` is refused, as h11 refuses it, and so is a request target that is not a path
(absolute or asterisk form: this front is no proxy). Trailer fields are dropped (as h11 drops them), never
added to the headers the caller check has read. At most ``MAX_PIPELINED`` requests wait behind the one
being answered. Everything else (keep-alive, flow control, upgrades) is uvicorn's own.

HTTP/1.1 answers go out in the order their requests came, so what is said about a request still being read
(its 408, 431 or 400) waits for the answers owed to the requests before it on the connection (reading stops
meanwhile): written at once, the client took it for the earlier request's answer, a tools/call that ran was
reported "not received in time" (which invites sending it again) and its real answer was lost. A request
queued behind another is not read until that one is answered: its time bound starts over then.

uvicorn writes a response's head when the app starts the response and its body when the app sends it: two
system calls for every answer. The connection's transport holds a response head until the next write (the
body, then one send) or, if none comes, until the loop's next turn (``HeadHoldingTransport``); order and
bytes are unchanged (issue 21). A writer that sends the body before it waits (the lean path's answer) says so
(``body_follows``, the transport found in the scope under ``HEAD_HOLDER_KEY``), and its head is held without
booking that turn (a ``call_soon`` and its cancellation per answer).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import httptools

from sentinel_mcp.app.lean_calls import HEAD_HOLDER_KEY
from sentinel_mcp.app.open_connections import REFUSAL as TOO_MANY_OPEN, open_connections
from sentinel_mcp.app.parse_refusals import (
    BAD_CODING,
    BUDGET,
    CUT_SHORT,
    UPGRADE_WITH_BODY,
    MALFORMED,
    NOT_A_PATH,
    TOO_LARGE,
    TOO_MANY_PIPELINED,
    TOO_SLOW,
    refusal_answer,
)
from sentinel_mcp.core.deployment_caps import cap
from sentinel_mcp.core.safe_headers import SAFE_HEAD_LINES
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger(__name__)
# in every head a layer of ours wrote (``app/safe_headers.py`` puts it in every answer it sees)
_MARK = b"\r\nx-content-type-options:"
_INTERNAL_ERROR = b"HTTP/1.1 500 "
MAX_HEAD_BYTES = 16 * 1024  # h11's max_incomplete_event_size, uvicorn's default with h11
# a request is read in bounded time: its head within HEAD_SECONDS of its first byte (or of the connection),
# its body within BODY_SECONDS of its head. uvicorn bounds neither, so a client sending a header line every
# few seconds held its connection (and a file descriptor) for hours: a thousand and nobody else got in.
# (a deployment with slow links raises them: SENTINEL_CAP_HTTP_HEAD_SECONDS, SENTINEL_CAP_HTTP_BODY_SECONDS)
HEAD_SECONDS = float(cap("HTTP_HEAD_SECONDS", 10))
BODY_SECONDS = float(cap("HTTP_BODY_SECONDS", 30))
# requests a connection may have waiting behind the one being answered. httptools parses a whole read at once
# and uvicorn queued every request in it: 128 KiB of pipelined 42-byte requests held ~7 MB (3,045 queued
# requests) until answered. One more is refused (400) and the connection closed; MCP clients never pipeline
# (SENTINEL_CAP_HTTP_PIPELINED raises it)
MAX_PIPELINED = cap("HTTP_PIPELINED", 16)
# a request answered before its body was read whole (refused: no credential, a body past the bound) ends its
# connection, as h11 ends it: uvicorn read on, throwing each chunk away, until the body's end or BODY_SECONDS
# (268 MB of chunked body streamed into a refused request in a third of a second). The answer is followed by
# the end of what is written (the client reads it, then EOF); what still comes is dropped unparsed for at most
# LINGER_SECONDS, then the connection closes (closed at once with unread bytes it is reset, and a reset can
# destroy the answer before the client has read it)
LINGER_SECONDS = 2.0


class HeadHoldingTransport:
    """A connection's transport that holds a response head (``HTTP/1.1 ...`` ending in a blank line) until the
    next write, which it then joins, or until the loop's next turn; closing writes what it holds first,
    aborting drops it. Everything else is the transport's own. ``body_follows``: set by a writer whose next
    head's body is written before it waits (the write that joins it is certain), so that head books no turn;
    the writer clears it when done (a head never written leaves nothing behind)."""

    __slots__ = ("_transport", "_loop", "_held", "_flushing", "body_follows", "body_unread", "head_lines",
                 "is_closing")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop,
                 body_unread: Callable[[], bool] | None = None) -> None:
        self._transport = transport
        # the transport's own, read from a slot: asked twice an answer (uvicorn and this front), through
        # ``__getattr__`` a Python call each time (issue 21)
        self.is_closing = transport.is_closing
        self._loop = loop
        self._held: bytes | None = None
        self._flushing: asyncio.Handle | None = None  # the loop's next turn writing what is held
        self.body_follows = False
        # whether the request being answered has body still to come: its head then says ``connection: close``
        # (the connection ends after it, LINGER_SECONDS; a client that took it for kept alive sent its next
        # request into a closing connection)
        self.body_unread = body_unread
        # header lines the next head written gets before its blank line, set by the writer around the one send
        # that writes it (app/safe_headers.py: a bytes constant joined, not five headers formatted by uvicorn)
        self.head_lines = b""

    def write(self, data: Any) -> None:
        held = self._held
        if held is not None:
            self._held = None
            if self._flushing is not None:  # joined: the turn that would have written it has nothing to do
                self._flushing.cancel()
                self._flushing = None
            self._transport.write(held + bytes(data))
        elif type(data) is bytes and data.startswith(b"HTTP/1.1 ") and data.endswith(b"\r\n\r\n"):
            if self.head_lines:
                data = data[:-2] + self.head_lines + b"\r\n"
                self.head_lines = b""
            elif data.startswith(_INTERNAL_ERROR) and _MARK not in data.lower():
                # a 500 no layer of ours wrote: uvicorn's own, after the app raised past every boundary or
                # answered nothing, sent by uvicorn itself, never through ``SafeHeaders``. Every other head
                # of an app passes that layer (only heads without ``head_lines`` are looked at: never the
                # lean path's)
                data = data[:-2] + SAFE_HEAD_LINES + b"\r\n"
            unread = self.body_unread
            if unread is not None and unread() and b"\r\nconnection: close\r\n" not in data:
                data = data[:-2] + b"connection: close\r\n\r\n"
            self._held = data
            if self.body_follows:  # its body is written next, before the writer waits: no turn booked
                self.body_follows = False
            else:
                self._flushing = self._loop.call_soon(self.flush)
        else:
            self._transport.write(data)

    def writelines(self, lines: Any) -> None:
        self.write(b"".join(lines))

    def flush(self) -> None:
        self._flushing = None
        held = self._held
        if held is not None:
            self._held = None
            if not self._transport.is_closing():
                self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + len(self._held or b"")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class FrontHTTPProtocol(HttpToolsProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # uvicorn logs a line per answer when the access logger has a handler anywhere up its tree (the
        # root's, here), and builds that line's arguments (client address, path) before ``info`` finds the
        # logger disabled: ~8 calls an answer for nothing. Asked once per connection, as uvicorn asks
        # hasHandlers
        self.access_log = self.access_log and self.access_logger.isEnabledFor(logging.INFO)
        self._in_head = True  # bytes received now belong to a request head not yet complete
        self._head_bytes = 0
        self._fields = 0  # the parsed size of the current head
        # when the part of the request being read must have arrived (None: nothing is being read), and the one
        # timer that checks it: moving the deadline costs no timer (a request reads three parts)
        self._deadline: float | None = None
        self._reading: asyncio.TimerHandle | None = None
        self._deferred: float | None = None  # a bound to start over once no earlier answer is owed
        self._held: bytes | None = None  # a refusal waiting for the earlier answers (then the end)
        self._lingering = False  # answered before its body was read whole: nothing more is read
        # the target of the request being read (None: not read whole yet), and why a parser callback refused
        self._target: bytes | None = None
        self._why: tuple[int, str] | None = None
        self._begun = False  # a request's first byte was read, its last not yet
        self._peer_done = False  # the client ended its side (a half close): answers owed, then the end
        self._counted: str | None = None  # the peer address it is counted under (``open_connections``)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        held = HeadHoldingTransport(transport, self.loop, self._answering_before_body_read)
        super().connection_made(held)  # type: ignore[arg-type]
        peer = self.client[0] if self.client else ""
        if not open_connections(self.server_state).take(peer, self):
            # past the bound on open connections with none idle to give way: told so and closed before
            # anything is read, so its descriptor is back at once (``open_connections.py``)
            self._lingering = True  # anything that still arrives before the close is dropped unparsed
            held.write(TOO_MANY_OPEN)
            held.close()
            return
        self._counted = peer
        self._arm(HEAD_SECONDS)

    def connection_lost(self, exc: Exception | None) -> None:
        self._give_back()
        self._deadline = None
        if self._reading is not None:
            self._reading.cancel()
            self._reading = None
        super().connection_lost(exc)

    def _give_back(self) -> None:
        peer, self._counted = self._counted, None
        if peer is not None:
            open_connections(self.server_state).give_back(peer, self)

    def give_way(self) -> None:
        """Closed at once for a newer connection of its holder (between requests: nothing of a request is
        lost); its place was taken back already (``open_connections.py``)."""
        self._counted = None
        self.transport.abort()

    def handle_websocket_upgrade(self) -> None:
        """The connection goes on under the WebSocket protocol, whose end this protocol never hears of: its
        place is handed over with it (``FrontWebSocketProtocol`` gives it back), or given back now."""
        peer, self._counted = self._counted, None
        super().handle_websocket_upgrade()
        taker = self.transport.get_protocol()
        if peer is not None:
            if hasattr(taker, "counted_as"):
                counts = open_connections(self.server_state)
                counts.hand_over(peer, self, taker)
                taker.counted_as(counts, peer)
            else:
                open_connections(self.server_state).give_back(peer, self)

    def _arm(self, seconds: float) -> None:
        self._deferred = None
        self._deadline = self.loop.time() + seconds
        if self._reading is None:
            self._reading = self.loop.call_at(self._deadline, self._check)

    def _disarm(self) -> None:
        self._deferred = None
        self._deadline = None  # the timer, when it fires, finds nothing to check and ends

    def _owed_ahead(self) -> bool:
        """An earlier request on this connection is not answered yet: anything written now would be taken
        for its answer. Reading a head, the last request read is an earlier one; reading a body, one is owed
        ahead only while this request waits in the pipeline (its task starts once those before it are
        answered)."""
        if self._in_head:
            return self.cycle is not None and not self.cycle.response_complete
        return bool(self.pipeline)

    def _refuse(self, answer: bytes) -> None:
        """``answer`` (a refusal of the request being read), then the end of the connection; after the
        answers owed ahead of it, if any (nothing more is read meanwhile)."""
        if self._lingering:  # refused already (in the same read): the first refusal stands
            return
        if self._owed_ahead():
            self._held = answer
            self._disarm()
            self.flow.pause_reading()
            return
        self.transport.write(answer)
        self._end_refused()

    def _refuse_as(self, status: int, reason: str) -> None:
        """The refusal of the request being read, said once in the log (bounded) and answered in its turn:
        JSON-RPC for a client of a JSON-RPC route (``parse_refusals.py``)."""
        if self._lingering or self._held is not None:
            return
        BUDGET.say(self.client, reason)
        self._refuse(refusal_answer(status, reason, self._target, self.server_state.default_headers))

    def send_400_response(self, msg: str) -> None:
        # uvicorn's answer to a request it could not parse (its bytes), in its turn
        self._refuse_as(400, MALFORMED)

    def _unsupported_upgrade_warning(self) -> None:
        # uvicorn's line for each request asking an upgrade it does not serve (h2c): it is served as plain
        # HTTP/1.1 (RFC 9110 7.8 lets a server ignore Upgrade), nothing to warn about, a line per request
        log.debug("HTTP: an Upgrade this front does not serve, ignored (%s)", self.client)

    def eof_received(self) -> bool | None:  # type: ignore[override]  # asyncio's own: True keeps it open
        """The client ended its side. uvicorn closed the connection then, so a client that half-closes after
        sending its request (``nc -N``, a script's ``shutdown``) never had its answer, though its call ran;
        and one whose request was cut short by its end had no word of it (h11 answered 400). Now the answers
        owed go out, a request cut short is refused (400) in its turn, and the connection ends after the last;
        an answer already being written (a stream) ends with the connection, as before.
        Under TLS there is no half close (asyncio closes it whatever is returned): as before."""
        self._peer_done = True
        transport = self.transport
        if transport is None or transport.is_closing() or not transport.can_write_eof():
            return None
        if self._lingering or self._held is not None:
            return True  # refused already: that refusal's own end closes it
        cycle = self.cycle
        if self._begun and (self._in_head or cycle is None or not cycle.response_started):
            self._refuse_as(400, CUT_SHORT)
            return True
        if cycle is not None and cycle.response_started and not cycle.response_complete:
            # an answer under way (an SSE stream, most often): an end is far more often a client gone than
            # one half closed, and a stream to a client gone held its session's place until a write failed
            return None
        if self.pipeline or (cycle is not None and not cycle.response_complete):
            return True  # answers owed, not begun: the last one's completion ends the connection
        return None  # nothing owed: closed, as before

    def on_response_complete(self) -> None:
        self._answered()
        cycle = self.cycle
        if (self._peer_done and self._held is None and not self.pipeline and not self.transport.is_closing()
                and (cycle is None or cycle.response_complete)):
            self.transport.close()  # the client has ended its side and every answer owed is out

    def _answered(self) -> None:
        super().on_response_complete()  # starts the next request queued, if any, and reads again
        cycle = self.cycle  # the last request read: the one answered, or one queued behind it (not complete)
        if cycle is not None and cycle.response_complete and cycle.more_body:
            if not self.transport.is_closing():
                self._linger()
            return
        if self.transport.is_closing() or self._owed_ahead():
            if self._held is not None:
                self.flow.pause_reading()
            return
        held, self._held = self._held, None
        if held is not None:
            self.transport.write(held)
            self._end_refused()
        elif self._deferred is not None:
            self._arm(self._deferred)

    def _end_refused(self) -> None:
        """After a refusal: a request refused in its head (no app runs for it) lingers, as the client may
        still be sending it (a head past the bound: closed with unread bytes, the connection is reset and the
        refusal lost unread); one whose app runs is closed (the app's late writes are dropped)."""
        if self._in_head:
            self._linger()
        else:
            self.transport.close()

    def _answering_before_body_read(self) -> bool:
        """The request being answered (its head is being written) has body still to come."""
        cycle = self.cycle  # being answered: an earlier one's body was read whole before this one was read
        return (cycle is not None and cycle.response_started and not cycle.response_complete
                and cycle.more_body)

    def _linger(self) -> None:
        """The answer is out before its request was read whole (its body, or a refused head): end the
        connection (LINGER_SECONDS)."""
        self._lingering = True
        self._disarm()
        transport = self.transport
        if not transport.can_write_eof():  # TLS: no half close
            transport.close()
            return
        transport.flush()  # type: ignore[attr-defined]  # HeadHoldingTransport: what it holds, then EOF
        try:
            transport.write_eof()
        except OSError:
            # the peer is gone already (its end reached the socket before the loop read it, and the answer was
            # reset): the half close raised ENOTCONN in the app's ``send`` ("Exception in ASGI application")
            transport.abort()
            return
        self.loop.call_later(LINGER_SECONDS, transport.close)

    def _check(self) -> None:
        self._reading = None
        deadline = self._deadline
        if deadline is None:
            return
        if self.loop.time() < deadline:  # moved since the timer was set: check again then
            self._reading = self.loop.call_at(deadline, self._check)
            return
        self._deadline = None
        transport = self.transport
        if transport is None or transport.is_closing() or transport.get_protocol() is not self:
            return  # gone, or upgraded (a WebSocket is its protocol's own)
        if self._owed_ahead():  # not read while earlier requests wait for their answers: starts over then
            self._deferred = HEAD_SECONDS if self._in_head else BODY_SECONDS
            return
        if self._in_head or self.cycle is None or not self.cycle.response_started:
            self._refuse_as(408, TOO_SLOW)
            return
        transport.close()

    def data_received(self, data: bytes) -> None:
        if self._held is not None or self._lingering:
            return  # refused: the connection ends once the answers owed ahead are out
        if self._in_head:
            self._head_bytes += len(data)
        # uvicorn's ``data_received``, with the refusal's reason and status kept (a parser callback below
        # says why it raised) and its log line bounded; the callbacks move the head state
        self._unset_keepalive_if_required()
        while True:
            try:
                self.parser.feed_data(data)
            except httptools.HttpParserUpgrade as e:
                if self._should_upgrade():
                    self.handle_websocket_upgrade()
                    break
                self._unsupported_upgrade_warning()
                # the parser stopped at the end of that head, taking what follows for the new protocol:
                # uvicorn dropped it, so a request pipelined behind was never answered. It is parsed as
                # HTTP/1.1 (the upgrade was not made; one with a body is refused in ``on_headers_complete``)
                offset = e.args[0] if e.args and type(e.args[0]) is int else len(data)
                data = data[offset:]
                if data and not (self._lingering or self._held is not None or self.transport.is_closing()):
                    continue
            except httptools.HttpParserError:
                why, self._why = self._why, None
                self._refuse_as(*(why or (400, MALFORMED)))
                return
            break
        if (self._in_head and self._head_bytes > MAX_HEAD_BYTES and not self.transport.is_closing()
                and self._held is None):
            self._refuse_as(431, TOO_LARGE)

    def _refused_in_callback(self, status: int, reason: str) -> ValueError:
        """Raised in a parser callback, this is a parser error (uvicorn would answer 400 and close): the
        status and reason to answer are kept for ``data_received``."""
        self._why = (status, reason)
        return ValueError(reason)

    def on_message_begin(self) -> None:
        if len(self.pipeline) >= MAX_PIPELINED:  # raised in a callback: uvicorn answers 400 and closes
            raise self._refused_in_callback(400, TOO_MANY_PIPELINED)
        self._fields = 0
        self._target = None
        self._begun = True
        self._arm(HEAD_SECONDS)
        super().on_message_begin()
        self.scope[HEAD_HOLDER_KEY] = self.transport  # type: ignore[literal-required]

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        if not self.url and not url.startswith(b"/"):  # the target's first piece (llhttp may give more)
            # origin form only: this front is no proxy. An absolute-form target names the authority that
            # counts instead of Host (RFC 9112 3.2.2), yet uvicorn keeps its path alone, so the Host check
            # (DNS rebinding) read a header the request itself overrides; "*" names no resource here
            raise self._refused_in_callback(400, NOT_A_PATH)
        super().on_url(url)

    def _count(self, n: int) -> None:
        # a whole head arrived in one read is measured here (its fields as parsed); raised in a parser
        # callback, this is a parser error: uvicorn answers 400 and closes the connection
        self._fields += n
        if self._fields > MAX_HEAD_BYTES:
            raise self._refused_in_callback(431, TOO_LARGE)

    def on_header(self, name: bytes, value: bytes) -> None:
        size = len(name)
        self._fields += size + len(value) + 4  # ``_count``, written out: this runs for every header
        if self._fields > MAX_HEAD_BYTES:
            raise self._refused_in_callback(431, TOO_LARGE)
        if self._target is None:
            self._target = self.url  # read whole: a header follows it
        if not self._in_head:
            # a trailer field (after a chunked body's last chunk): uvicorn appended it to the request's
            # headers after the caller check had read them, so a second Authorization or Mcp-Session-Id there
            # escaped the check that refuses a header sent twice. Dropped, as h11 drops trailers
            return
        # lowered only when it may be the one (17 bytes in any case): not once per header of every request
        if size == 17 and name.lower() == b"transfer-encoding" and value.strip().lower() != b"chunked":
            # h11 refuses any other coding too: a body framed by a coding nobody here decodes ("gzip,
            # chunked") is not a JSON message, and a coding list is where request smuggling hides
            raise self._refused_in_callback(400, BAD_CODING)
        # uvicorn's ``on_header``, written out (a call a header, 11 headers a request): the name lowered, the
        # value's trailing whitespace dropped (RFC 9110 5.5), ``Expect: 100-continue`` noted
        name = name.lower()
        value = value.rstrip(b" \t")
        if name == b"expect" and value.lower() == b"100-continue":
            self.expect_100_continue = True
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        if self.parser.should_upgrade() and not self._should_upgrade() and self._declares_body():
            # the parser takes the body of a request asking an Upgrade for the new protocol's bytes: the
            # request ran without its body (a tools/call answered "Parse error") and the body was dropped
            raise self._refused_in_callback(400, UPGRADE_WITH_BODY)
        if self._target is None:
            self._target = self.url
        self._in_head = False
        self._head_bytes = 0
        self._arm(BODY_SECONDS)
        super().on_headers_complete()

    def _declares_body(self) -> bool:
        return any(name == b"transfer-encoding" or (name == b"content-length" and value.strip(b" \t0"))
                   for name, value in self.headers)

    def on_message_complete(self) -> None:
        self._disarm()  # read whole: the answer may take as long as it takes (a stream, a slow tool)
        self._target = None  # what is read next belongs to the next request
        self._begun = False
        super().on_message_complete()
        self._in_head = True  # what follows on this connection is the next request's head
