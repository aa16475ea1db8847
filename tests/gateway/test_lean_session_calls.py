"""The lean 2025 path (app/lean_session_calls.py): a ``tools/call`` POSTed on an open handshake-era session is
streamed by Sentinel itself, and the bytes on the wire are the SDK's.

The same call is sent twice on one session: plain (the lean path) and with a progress token in ``_meta``
(which the lean path leaves to the SDK; a tool that reports no progress gets the same stream there). The raw
HTTP answers are compared: status, head (the date masked), every chunk of the body in order (the event
framing, the JSON of each event with the per-call random values masked, the empty last chunk). A probe
(``lean_session_probe.py``) notes which request ids the lean path streamed, so each test knows which path
answered. Elicitation during a call, a cancellation, pings, a client that goes away, a server that shuts
down, a session of another principal and every malformed or unusual POST are covered against the same
gateway.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult

from sentinel_mcp.app.lean_session_calls import WATCH_AFTER
from sentinel_mcp.core.call_meta import SESSION_KEY
from sentinel_mcp.core.safe_headers import SAFE_HEADERS
from sentinel_mcp.gateway.call_record import META_KEY
from tests.conftest import free_port, stop_process, wait_http
from tests.gateway.helpers import TOOLBOX

pytestmark = pytest.mark.timeout(180)

PROBE = str(Path(__file__).with_name("lean_session_probe.py"))
ALICE, BOB = "alice-lean-token-0123456789", "bob-lean-token-0123456789ab"
VERSION = "2025-11-25"
RANDOM_KEYS = {SESSION_KEY, META_KEY, "requestState", "decision_id"}
ACCEPT = "application/json, text/event-stream"


class Gateway:
    def __init__(self, port: int, log: Path, proc: subprocess.Popen[bytes]) -> None:
        self.port, self.log, self.proc = port, log, proc

    def lean_ids(self) -> list[str]:
        return self.log.read_text().split() if self.log.exists() else []

    def direct_ids(self) -> list[str]:
        """The lean calls handed to the session's dispatcher directly (session_dispatch.py)."""
        return [i.removeprefix("direct:") for i in self.lean_ids() if i.startswith("direct:")]


def start(tmp: Path, **env: str) -> Gateway:
    cfg = tmp / "sentinel.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
        "sentinel": {"data_dir": str(tmp / "state"), "builtins": [],
                     "principals": [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}]}}))
    port, log = free_port(), tmp / "lean.log"
    proc = subprocess.Popen(
        [sys.executable, PROBE, "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env={**os.environ, "LEAN_SESSION_LOG": str(log), **env})
    wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
    return Gateway(port, log, proc)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = start(tmp_path_factory.mktemp("lean2025"), LEAN_SESSION_PING="1", LEAN_SESSION_WATCH="0.3")
    try:
        yield gw
    finally:
        stop_process(gw.proc)


class Answer:
    """One raw HTTP answer: status, head (name, value) in order, the body's chunks, and whether the body
    ended with the last (empty) chunk."""

    def __init__(self, status: int, head: list[tuple[str, str]], chunks: list[bytes], ended: bool) -> None:
        self.status, self.head, self.chunks, self.ended = status, head, chunks, ended

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.head if k.lower() == name), None)

    def events(self) -> list[Any]:
        """The JSON-RPC messages of the answer: its events, or the one message of a JSON answer."""
        if self.header("content-type") == "application/json":
            return [json.loads(b"".join(self.chunks))]
        return [json.loads(c.split(b"data: ", 1)[1]) for c in self.chunks if c.startswith(b"event: message")]


def _read_until(sock: socket.socket, buf: bytearray, marker: bytes) -> int:
    while (at := buf.find(marker)) < 0:
        got = sock.recv(65536)
        if not got:
            raise EOFError
        buf += got
    return at


def read_answer(sock: socket.socket, on_chunk: Any = None) -> Answer:
    buf = bytearray()
    end = _read_until(sock, buf, b"\r\n\r\n")
    lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
    del buf[:end + 4]
    status = int(lines[0].split()[1])
    head = [tuple(x.strip() for x in line.split(":", 1)) for line in lines[1:]]
    answer = Answer(status, head, [], False)  # type: ignore[arg-type]
    length = answer.header("content-length")
    if length is not None:
        while len(buf) < int(length):
            buf += sock.recv(65536)
        answer.chunks.append(bytes(buf[:int(length)]))
        answer.ended = True
        return answer
    try:
        while True:
            at = _read_until(sock, buf, b"\r\n")
            size = int(bytes(buf[:at]), 16)
            while len(buf) < at + 2 + size + 2:
                got = sock.recv(65536)
                if not got:
                    raise EOFError
                buf += got
            chunk = bytes(buf[at + 2:at + 2 + size])
            del buf[:at + 2 + size + 2]
            if size == 0:
                answer.ended = True
                return answer
            answer.chunks.append(chunk)
            if on_chunk is not None:
                on_chunk(chunk)
    except (EOFError, OSError):
        return answer  # closed without the last chunk


def send(port: int, body: Any, headers: list[tuple[str, str]], *, method: str = "POST") -> socket.socket:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    lines = [f"{method} /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", *(f"{k}: {v}" for k, v in headers),
             f"Content-Length: {len(data)}"]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data)
    return sock


def exchange(port: int, body: Any, headers: list[tuple[str, str]], **kw: Any) -> Answer:
    sock = send(port, body, headers, **kw)
    try:
        return read_answer(sock)
    finally:
        sock.close()


def base_headers(token: str = ALICE, sid: str | None = None) -> list[tuple[str, str]]:
    out = [("Content-Type", "application/json"), ("Accept", ACCEPT), ("Authorization", f"Bearer {token}")]
    if sid is not None:
        out += [("Mcp-Session-Id", sid), ("MCP-Protocol-Version", VERSION)]
    return out


def open_session(port: int, token: str = ALICE, capabilities: dict[str, Any] | None = None) -> str:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": capabilities or {},
        "clientInfo": {"name": "lean-2025", "version": "1"}}}
    answer = exchange(port, init, base_headers(token))
    sid = answer.header("mcp-session-id")
    assert answer.status == 200 and sid, answer.head
    done = exchange(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, base_headers(token, sid))
    assert done.status == 202
    return sid


def tool_call(rid: Any, name: str, arguments: Any, *, via_sdk: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if via_sdk:
        params["_meta"] = {"progressToken": f"p-{rid}"}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def masked(value: Any) -> Any:
    if isinstance(value, dict):
        return [(k, "<random>" if k in RANDOM_KEYS else masked(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


def wire_form(answer: Answer, rid: Any) -> Any:
    """The answer with what differs per call masked: the date, the request id, the random values; each event
    checked to be written as the SDK writes it (``event: message``, compact JSON in one data line)."""
    head = [(k, "<date>" if k.lower() == "date" else v) for k, v in answer.head]
    chunks = []
    for chunk in answer.chunks:
        if chunk.startswith(b": ping - "):
            chunks.append(("ping", chunk.endswith(b"\r\n\r\n") and chunk.count(b"\r\n") == 2))
            continue
        assert chunk.startswith(b"event: message\r\ndata: ") and chunk.endswith(b"\r\n\r\n"), chunk
        text = chunk[len(b"event: message\r\ndata: "):-4].decode()
        assert "\r" not in text and "\n" not in text
        data = json.loads(text, object_pairs_hook=lambda pairs: dict(pairs))
        assert text == json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        if data.get("id") == rid:
            data["id"] = "<rid>"
        elif "method" in data and "id" in data:
            data["id"] = "<the server's request id>"
        chunks.append(masked(data))
    return answer.status, head, chunks, answer.ended


CASES = [
    ("tb__echo", {"text": "hello"}), ("tb__noop", {}), ("tb__add", {"a": 1, "b": 2.5}),
    ("tb__echo", {"text": "\u00e9\u6f22 \U0001f600 \\ \" </script>"}),
    ("tb__chatty", {}),  # two log notifications on the stream before the answer
    ("tb__echo", {"text": 5}),  # wrong type: the tool's error
    ("tb__echo", {}),  # missing argument
    ("tb__no_such_tool", {}),  # unknown tool
    ("tb__delete_thing", {"name": "x"}),  # the policy asks; this client cannot be asked
    ("tb__echo", None),
]


def json_form(answer: Answer, rid: Any, sid: str) -> Any:
    """A JSON answer checked to be written as the SDK's JSON-response mode writes it
    (``_create_json_response``: its head after uvicorn's own, compact JSON), its message masked as
    ``wire_form`` masks an event's."""
    body = b"".join(answer.chunks)
    head = [(k, v) for k, v in answer.head if k.lower() not in ("date", "server")]
    assert head == [("content-type", "application/json"), ("mcp-session-id", sid),
                    ("content-length", str(len(body))),
                    *[(k.decode(), v.decode()) for k, v in SAFE_HEADERS]], answer.head  # every answer's
    text = body.decode()
    data = json.loads(text)
    assert text == json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    assert data.get("id") == rid
    data["id"] = "<rid>"
    return answer.status, masked(data), answer.ended


def assert_same_answer(lean: Answer, lean_id: Any, sdk: Answer, sdk_id: Any, sid: str) -> None:
    """The lean path's answer is the SDK's stream: byte for byte, or, when the answer was the one thing to
    send (one event on the SDK's stream), its message as one JSON response."""
    status, head, chunks, ended = wire_form(sdk, sdk_id)
    if lean.header("content-type") == "application/json":
        assert len(chunks) == 1 and json_form(lean, lean_id, sid) == (status, chunks[0], ended), sdk.chunks
    else:
        assert wire_form(lean, lean_id) == (status, head, chunks, ended)


@pytest.mark.parametrize("name,arguments", CASES)
def test_lean_and_sdk_streams_are_the_same_bytes(gateway: Gateway, name: str, arguments: Any) -> None:
    """The same messages on both paths; the lean path's answer alone (nothing streamed before it) is one JSON
    response, everything else the SDK's stream byte for byte."""
    sid = open_session(gateway.port)
    began = time.monotonic()
    lean = exchange(gateway.port, tool_call(11, name, arguments), base_headers(sid=sid))
    took = time.monotonic() - began
    sdk = exchange(gateway.port, tool_call(12, name, arguments, via_sdk=True), base_headers(sid=sid))
    assert "11" in gateway.lean_ids() and "12" not in gateway.lean_ids()
    assert "11" in gateway.direct_ids()
    assert lean.status == 200 and lean.ended and lean.events()[-1]["id"] == 11
    assert_same_answer(lean, 11, sdk, 12, sid)
    # notifications before the answer: a stream; so may be a call outlasting WATCH_AFTER (its head goes first)
    streamed = lean.header("content-type") == "text/event-stream"
    assert streamed if name == "tb__chatty" else (not streamed or took >= WATCH_AFTER), (took, lean.head)


def test_string_ids_and_header_spellings_take_the_lean_path(gateway: Gateway) -> None:
    sid = open_session(gateway.port)
    headers = [("content-type", "application/json; charset=utf-8"), ("accept", "*/*"),
               ("authorization", f"Bearer {ALICE}"), ("MCP-SESSION-ID", sid)]  # no version: the default
    answer = exchange(gateway.port, tool_call("str-7", "tb__echo", {"text": "x"}), headers)
    assert answer.status == 200 and answer.ended and "str-7" in gateway.lean_ids()
    assert answer.events()[-1]["result"]["content"][0]["text"] == "x"


async def approve(ctx: Any, params: Any) -> ElicitResult:
    asked = str(getattr(params, "message", ""))
    content: dict[str, Any] = {"word": "green"} if "a word for" in asked else {"approve": True}
    return ElicitResult(action="accept", content=content)


async def test_real_client_asked_during_a_lean_call(gateway: Gateway) -> None:
    """The gateway's own question (the policy asks before a destructive tool) and the upstream's question
    (a tool that asks for a word) both travel on the lean call's stream; the answers come back as POSTs."""
    before = len(gateway.lean_ids())
    target = streamable_http_client(f"http://127.0.0.1:{gateway.port}/mcp", http_client=httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {ALICE}"}, timeout=30))
    async with Client(target, mode="legacy", elicitation_callback=approve) as c:
        assert (await c.call_tool("tb__delete_thing", {"name": "z"})).content[0].text == "deleted z"
        asked = await c.call_tool("tb__ask_word", {"item": "tea"})
        assert asked.content[0].text == "tea=green", asked
        assert (await c.call_tool("tb__echo", {"text": "after"})).content[0].text == "after"
    assert len(gateway.lean_ids()) >= before + 3


def test_an_elicitation_on_the_raw_stream(gateway: Gateway) -> None:
    """The question is an event of the call's own stream; its answer, POSTed on the session, lets the call
    finish on that stream (both paths)."""
    sid = open_session(gateway.port, capabilities={"elicitation": {"form": {}}})
    for rid, via_sdk in ((31, False), (32, True)):
        sock = send(gateway.port, tool_call(rid, "tb__delete_thing", {"name": f"n{rid}"}, via_sdk=via_sdk),
                    base_headers(sid=sid))

        def answer_question(chunk: bytes) -> None:
            event = json.loads(chunk.split(b"data: ", 1)[1])
            if event.get("method") == "elicitation/create":
                reply = {"jsonrpc": "2.0", "id": event["id"], "result": {
                    "action": "accept", "content": {"approve": True}}}
                assert exchange(gateway.port, reply, base_headers(sid=sid)).status == 202

        try:
            answer = read_answer(sock, answer_question)
        finally:
            sock.close()
        methods = [e.get("method") for e in answer.events()]
        assert methods[0] == "elicitation/create" and answer.ended, answer.chunks
        final = answer.events()[-1]
        assert final["id"] == rid and final["result"]["content"][0]["text"] == f"deleted n{rid}"
    assert "31" in gateway.lean_ids() and "32" not in gateway.lean_ids()


def _started(path: Path, count: int) -> None:
    for _ in range(300):
        if path.exists() and path.read_text().count("started") >= count:
            return
        time.sleep(0.05)
    raise AssertionError("the tool never started")


def test_a_cancelled_lean_call_ends_as_the_sdks(gateway: Gateway, tmp_path: Path) -> None:
    sid = open_session(gateway.port)
    marker = tmp_path / "marks"
    answers = []
    for n, (rid, via_sdk) in enumerate(((41, False), (42, True))):
        sock = send(gateway.port, tool_call(rid, "tb__hang_marked", {"path": str(marker)}, via_sdk=via_sdk),
                    base_headers(sid=sid))
        try:
            _started(marker, n + 1)
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": rid, "reason": "test"}}
            assert exchange(gateway.port, cancel, base_headers(sid=sid)).status == 202
            answer = read_answer(sock)
        finally:
            sock.close()
        assert answer.ended and answer.events()[-1]["error"]["code"] == -32800, answer.chunks
        answers.append(answer)
    # a cancelled call ends as the SDK's stream, never as one JSON response: the SDK's client, closing after
    # its cancel, reads a late JSON answer into its closed session and raises from its exit
    assert answers[0].header("content-type") == "text/event-stream"
    assert_same_answer(answers[0], 41, answers[1], 42, sid)
    assert "41" in gateway.lean_ids() and "42" not in gateway.lean_ids()
    assert "41" in gateway.direct_ids()  # the posted cancellation found the directly dispatched call
    _marked(marker, "cancelled", 2)  # the upstream's call was cancelled too, on both paths


def test_a_cancellation_on_another_session_cancels_nothing(gateway: Gateway, tmp_path: Path) -> None:
    """A directly dispatched call is in its own session's in-flight table only: the same id cancelled on
    another session (another principal's, or the same principal's) leaves it running."""
    mine = open_session(gateway.port, ALICE)
    marker = tmp_path / "other-session"
    hang = tool_call(111, "tb__hang_marked", {"path": str(marker)})
    sock = send(gateway.port, hang, base_headers(sid=mine))
    try:
        _started(marker, 1)
        assert "111" in gateway.direct_ids()
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 111}}
        for token in (BOB, ALICE):
            other = open_session(gateway.port, token)
            assert exchange(gateway.port, cancel, base_headers(token, other)).status == 202
        time.sleep(1.0)
        assert "cancelled" not in marker.read_text()  # still running
        assert exchange(gateway.port, cancel, base_headers(ALICE, mine)).status == 202
        answer = read_answer(sock)
    finally:
        sock.close()
    _marked(marker, "cancelled", 1)
    assert answer.ended and answer.events()[-1]["error"]["code"] == -32800, answer.chunks


@pytest.mark.parametrize("rid", ["", "  spaced  ", "ünï-cöde", "x" * 300, -5, 0, 2**53 - 1, -(2**53 - 1)])
def test_any_string_or_integer_id_is_answered_under_itself_directly(gateway: Gateway, rid: Any) -> None:
    sid = open_session(gateway.port)
    before = len(gateway.direct_ids())
    answer = exchange(gateway.port, tool_call(rid, "tb__echo", {"text": "id"}), base_headers(sid=sid))
    assert answer.status == 200 and answer.ended, answer.chunks
    final = answer.events()[-1]
    assert final["id"] == rid and type(final["id"]) is type(rid)
    assert final["result"]["content"][0]["text"] == "id"
    assert len(gateway.direct_ids()) == before + 1  # handed to the session's dispatcher


@pytest.mark.parametrize("rid", [1.0, True, None, 2**53, -(2**53), 2**63 - 1, 2**70, [1], {"a": 1}], ids=repr)
def test_an_id_of_another_type_is_refused_before_any_path(gateway: Gateway, rid: Any) -> None:
    sid = open_session(gateway.port)
    before = gateway.lean_ids()
    answer = exchange(gateway.port, tool_call(rid, "tb__echo", {"text": "id"}), base_headers(sid=sid))
    assert answer.status == 400 and b"id must be a string or an integer" in b"".join(answer.chunks)
    assert gateway.lean_ids() == before


def _marked(path: Path, word: str, count: int) -> None:
    for _ in range(300):
        if path.exists() and path.read_text().count(word) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path.read_text() if path.exists() else ''!r}: not {count} x {word}")


TRACE_CONTEXTS = [
    {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
    {"tracestate": "vendor=x"},
    {"baggage": "user=alice"},
    {"b3": "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1"},
    {"io.modelcontextprotocol/protocolVersion": "2025-11-25", "traceparent": f"00-{'1' * 32}-{'2' * 16}-01"},
]


@pytest.mark.parametrize("meta", TRACE_CONTEXTS, ids=[",".join(m) for m in TRACE_CONTEXTS])
def test_a_call_carrying_trace_context_keeps_the_sdks_span(gateway: Gateway, meta: dict[str, str]) -> None:
    """Any ``_meta`` key that could carry trace context (anything beyond the quiet ones) sends the call down
    the session's stream, to the runner with its OpenTelemetry span; it is answered all the same."""
    sid = open_session(gateway.port)
    rid = f"trace-{len(gateway.lean_ids())}"
    body = tool_call(rid, "tb__echo", {"text": "traced"})
    body["params"]["_meta"] = meta
    answer = exchange(gateway.port, body, base_headers(sid=sid))
    assert answer.status == 200 and answer.ended, answer.chunks
    assert answer.events()[-1]["result"]["content"][0]["text"] == "traced"
    assert rid in gateway.lean_ids() and rid not in gateway.direct_ids()


@pytest.mark.parametrize("meta", ["text", ["list"], 7, None, True], ids=repr)
def test_a_malformed_meta_is_answered_as_the_sdk_answers_it(gateway: Gateway, meta: Any) -> None:
    """A ``_meta`` that is not an object never reaches the unspanned runner: the SDK's path judges it (the
    same answer as a progress-token call of the SDK's own path would get for it)."""
    sid = open_session(gateway.port)
    rid = f"meta-{len(gateway.lean_ids())}"
    body = tool_call(rid, "tb__echo", {"text": "m"})
    body["params"]["_meta"] = meta
    answer = exchange(gateway.port, body, base_headers(sid=sid))
    assert answer.status in (200, 400), answer.chunks
    if answer.status == 200:
        assert answer.events()[-1]["id"] == rid
    assert rid not in gateway.direct_ids()


def test_a_session_deleted_mid_call_ends_the_call_as_the_sdk_ends_it(tmp_path: Path) -> None:
    """DELETE while a directly dispatched call runs: the session's end cancels it (it runs in the session's
    task group), the upstream's call is cancelled, the stream ends as the SDK's path ends it."""
    gw = start(tmp_path, LEAN_SESSION_WATCH="0.2")
    try:
        forms = []
        for n, (rid, via_sdk) in enumerate(((101, False), (102, True))):
            sid = open_session(gw.port)
            marker = tmp_path / f"deleted-{rid}"
            sock = send(gw.port, tool_call(rid, "tb__hang_marked", {"path": str(marker)}, via_sdk=via_sdk),
                        base_headers(sid=sid))
            try:
                _started(marker, 1)
                assert exchange(gw.port, b"", base_headers(sid=sid), method="DELETE").status == 200
                answer = read_answer(sock)
            finally:
                sock.close()
            _marked(marker, "cancelled", 1)
            answer.head = [(k, "<session>" if k.lower() == "mcp-session-id" else v) for k, v in answer.head]
            forms.append(wire_form(answer, rid))
        assert forms[0] == forms[1]
        assert forms[0][0] == 200 and forms[0][-1]  # the head, then the stream ended (no answer: gone)
        assert "101" in gw.direct_ids() and "102" not in gw.lean_ids()
    finally:
        stop_process(gw.proc)


def test_pings_on_a_long_lean_call(gateway: Gateway) -> None:
    """Both paths send the same ping comment every interval (shortened to 1 s by the probe)."""
    sid = open_session(gateway.port)
    forms = []
    for rid, via_sdk in ((51, False), (52, True)):
        answer = exchange(gateway.port, tool_call(rid, "tb__slow", {"seconds": 2.5}, via_sdk=via_sdk),
                          base_headers(sid=sid))
        status, head, chunks, ended = wire_form(answer, rid)
        pings = [c for c in chunks if isinstance(c, tuple) and c[0] == "ping"]
        assert pings and all(ok for _, ok in pings) and ended and status == 200, answer.chunks
        final = answer.events()[-1]
        assert final["id"] == rid and not final["result"]["isError"]
        forms.append((status, head, ended))
    assert forms[0] == forms[1]
    assert "51" in gateway.lean_ids()


def test_a_client_that_goes_away_frees_its_call(gateway: Gateway, tmp_path: Path) -> None:
    """The stream is dropped when the client leaves (the call itself runs on, as on the SDK path); the same
    request id is then streamed again by the lean path, its old queue gone."""
    sid = open_session(gateway.port)
    marker = tmp_path / "gone"
    sock = send(gateway.port, tool_call(61, "tb__hang_marked", {"path": str(marker)}), base_headers(sid=sid))
    _started(marker, 1)
    sock.close()
    time.sleep(1.0)  # past the watcher's start (0.3 s in the probe): it sees the disconnect
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 61}}
    assert exchange(gateway.port, cancel, base_headers(sid=sid)).status == 202
    for _ in range(300):  # the upstream hears the cancellation once the gateway's call has ended
        if "cancelled" in marker.read_text():
            break
        time.sleep(0.05)
    time.sleep(0.3)
    again = exchange(gateway.port, tool_call(61, "tb__echo", {"text": "again"}), base_headers(sid=sid))
    assert again.ended and again.events()[-1]["result"]["content"][0]["text"] == "again"
    assert gateway.lean_ids().count("61") == 2


def test_another_principals_session_is_not_found(gateway: Gateway) -> None:
    sid = open_session(gateway.port, ALICE)
    before = gateway.lean_ids()
    for token, expected in ((BOB, 404), ("wrong-token-0123456789abcdef", 401)):
        answer = exchange(gateway.port, tool_call(71, "tb__echo", {"text": "x"}),
                          base_headers(token, sid))
        assert answer.status == expected, answer.chunks
    unknown = exchange(gateway.port, tool_call(72, "tb__echo", {"text": "x"}), base_headers(ALICE, "f" * 32))
    assert unknown.status == 404
    assert gateway.lean_ids() == before
    # a session ended by DELETE is gone for the lean path as for the SDK
    assert exchange(gateway.port, b"", base_headers(ALICE, sid), method="DELETE").status == 200
    gone = exchange(gateway.port, tool_call(73, "tb__echo", {"text": "x"}), base_headers(ALICE, sid))
    assert gone.status == 404 and gateway.lean_ids() == before


UNUSUAL = [
    ("accept JSON only", [("Accept", "application/json")], 406),
    ("accept SSE only", [("Accept", "text/event-stream")], 406),
    ("text content type", [("Content-Type", "text/plain")], 415),  # WireGuard's media type rule
    ("version of the other era", [("MCP-Protocol-Version", "2026-07-28")], None),
    ("unknown version", [("MCP-Protocol-Version", "1999-01-01")], None),
    ("resuming", [("Last-Event-ID", "abc")], None),
]


@pytest.mark.parametrize("label,change,status", UNUSUAL, ids=[u[0] for u in UNUSUAL])
def test_unusual_posts_go_to_the_sdk(gateway: Gateway, label: str, change: list[tuple[str, str]],
                                     status: int | None) -> None:
    sid = open_session(gateway.port)
    names = {k.lower() for k, _ in change}
    headers = [(k, v) for k, v in base_headers(sid=sid) if k.lower() not in names] + change
    before = gateway.lean_ids()
    answer = exchange(gateway.port, tool_call(81, "tb__echo", {"text": "x"}), headers)
    assert gateway.lean_ids() == before, label
    if status is not None:
        assert answer.status == status


def test_a_request_id_in_flight_goes_to_the_sdk(gateway: Gateway, tmp_path: Path) -> None:
    sid = open_session(gateway.port)
    marker = tmp_path / "dup"
    first = send(gateway.port, tool_call(91, "tb__hang_marked", {"path": str(marker)}), base_headers(sid=sid))
    try:
        _started(marker, 1)
        count = gateway.lean_ids().count("91")
        second = send(gateway.port, tool_call(91, "tb__echo", {"text": "dup"}), base_headers(sid=sid))
        second.settimeout(2)
        try:
            second.recv(1)
        except OSError:
            pass
        second.close()
        assert gateway.lean_ids().count("91") == count  # the SDK decides what a duplicate id gets
    finally:
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 91}}
        exchange(gateway.port, cancel, base_headers(sid=sid))
        first.close()


def test_shutdown_ends_an_open_lean_stream(tmp_path: Path) -> None:
    gw = start(tmp_path, LEAN_SESSION_WATCH="0.2")
    try:
        sid = open_session(gw.port)
        marker = tmp_path / "shutdown"
        sock = send(gw.port, tool_call(5, "tb__hang_marked", {"path": str(marker)}), base_headers(sid=sid))
        _started(marker, 1)
        result: list[Answer] = []
        reader = threading.Thread(target=lambda: result.append(read_answer(sock)))
        reader.start()
        time.sleep(0.5)
        gw.proc.send_signal(signal.SIGINT)
        reader.join(60)
        assert result and not result[0].ended  # dropped as the SDK drops it, not left open
        assert gw.proc.wait(60) is not None
        assert "5" in gw.lean_ids()
    finally:
        sock.close()
        stop_process(gw.proc)
