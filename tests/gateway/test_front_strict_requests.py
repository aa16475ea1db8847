"""What the HTTP front takes of a POSTed message, the same on every path (the lean 2026 path, the SDK's 2026
path, a handshake-era session's lean path and the SDK's behind it), over real HTTP on 127.0.0.1:

- the body is JSON in UTF-8 only: ``Content-Type`` is the media type ``application/json`` (type and subtype
  in any case), its one allowed parameter ``charset=utf-8`` (any case, quoted or not); anything else is a 415
  with a JSON-RPC error and runs nothing. ``application/json-patch+json``, ``application/jsonx`` and
  ``charset=utf-16`` were taken (a prefix test) and the body read as UTF-8 anyway;
- a progress token is a string or an integer (the spec): ``true``, a float, an object, a list or null is an
  invalid-params error, the call never run. The SDK passed over such a token and ran the call;
- ``_meta["sentinel/session"]`` and ``X-Sentinel-Session`` naming different conversations is refused
  (``session_refused``); the ``_meta`` key won silently, so the header's conversation was not the one used.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable
from typing import Any

import pytest

from sentinel_mcp.core.call_meta import SESSION_KEY
from tests.gateway.test_lean_calls import STORE, TOKEN, call, gateway, headers_for  # noqa: F401 - its fixture
from tests.records.rig import audit_rows

pytestmark = pytest.mark.timeout(180)

LEGACY = "2025-06-18"
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {},
                   "clientInfo": {"name": "strict", "version": "1"}}}
PATHS = ("lean", "sdk", "session-lean", "session-sdk")


def exchange(port: int, body: bytes, headers: list[tuple[str, str]]) -> tuple[int, dict[str, str], str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest("POST", "/mcp")
        for k, v in headers:
            conn.putheader(k, v)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode()
    finally:
        conn.close()


def answer_of(text: str) -> Any:
    """The JSON-RPC answer in a JSON body or an event stream."""
    events = [line[len("data: "):] for line in text.splitlines() if line.startswith("data: ")]
    return json.loads(events[-1] if events else text)


_SESSION: dict[int, str] = {}


def session_id(port: int) -> str:
    if port not in _SESSION:
        base = [("Authorization", f"Bearer {TOKEN}"), ("Accept", "application/json, text/event-stream"),
                ("Content-Type", "application/json")]
        status, head, _ = exchange(port, json.dumps(INIT).encode(), base)
        assert status == 200, status
        sid = head["mcp-session-id"]
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        exchange(port, json.dumps(done).encode(),
                 base + [("Mcp-Session-Id", sid), ("MCP-Protocol-Version", LEGACY)])
        _SESSION[port] = sid
    return _SESSION[port]


def send(port: int, path: str, text: str, content_type: str | None = "application/json",
            meta: dict[str, Any] | None = None, edit: Callable[[bytes], bytes] | None = None,
            **extra: str) -> tuple[int, dict[str, str], Any]:
    """``tb__echo`` of ``text`` on ``path``, with ``content_type`` (None: no such header); ``edit`` rewrites
    the body's bytes (a spelling ``json.dumps`` would not write)."""
    via_sdk = path.endswith("sdk")
    if path.startswith("session"):
        params: dict[str, Any] = {"name": "tb__echo", "arguments": {"text": text}}
        extra_meta = {**({"progressToken": "p1"} if via_sdk else {}), **(meta or {})}
        if extra_meta:
            params["_meta"] = extra_meta
        body = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params}
        headers = [("Authorization", f"Bearer {TOKEN}"), ("Accept", "application/json, text/event-stream"),
                   ("Mcp-Session-Id", session_id(port)), ("MCP-Protocol-Version", LEGACY)]
    else:
        body = call("tb__echo", {"text": text}, 9, via_sdk=via_sdk)
        body["params"]["_meta"].update(meta or {})
        headers = [(k, v) for k, v in headers_for("tb__echo").items() if k != "Content-Type"]
    headers += list(extra.items())
    if content_type is not None:
        headers.append(("Content-Type", content_type))
    written = json.dumps(body).encode()
    status, head, raw = exchange(port, edit(written) if edit else written, headers)
    return status, head, answer_of(raw) if raw else None


def ran(answer: Any, text: str) -> bool:
    result = answer.get("result") if isinstance(answer, dict) else None
    return isinstance(result, dict) and not result.get("isError") and result["content"][0]["text"] == text


def audit_count() -> int:
    return len(audit_rows(STORE[0]))


# the audit's count a refused case read after its request (each read is a consistent copy of the running
# gateway's store, snapshot.readable_copy: one read saved a case), by the case's node id
_COUNTED_AFTER: dict[str, int] = {}


def audit_before(request: pytest.FixtureRequest) -> int:
    """The audit's count before this case's request: what the case run just before it read after its own,
    when that was a refused case that passed (nothing ran between the two reads), else read now."""
    items = request.session.items
    at = items.index(request.node)
    previous = items[at - 1].nodeid if at else None
    counted = _COUNTED_AFTER.pop(previous, None) if previous is not None else None
    _COUNTED_AFTER.clear()  # a count is good for the next case only
    return counted if counted is not None else audit_count()


def audit_unchanged(request: pytest.FixtureRequest, before: int) -> None:
    """Nothing was decided, nothing ran: the audit's count is what it was before the request."""
    after = audit_count()
    assert after == before, (before, after)
    _COUNTED_AFTER[request.node.nodeid] = after


REFUSED_TYPES = [
    None, "", "application/json-patch+json", "application/jsonx", "application/json5", "application/json+x",
    "application/json; charset=utf-16", "application/json;charset=UTF-16LE",
    'application/json; charset="utf-16"', "application/json; charset=latin1",
    "application/json; charset=us-ascii", "application/json; charset=utf8", "application/json; charset=",
    "application/json; charset",
    "application/json; charset=utf-8; charset=utf-16", "application/json; foo=bar",
    "application/json; charset=utf-8; boundary=x", "application/json, text/plain",
    "text/plain, application/json", "text/json", "application/x-json", "application/*", "*/*", "application",
    "application/", "/json", "application /json", "application/ json", "application/json charset=utf-8",
    'application/json; charset="utf-8', "application/json; charset=utf-8,",
    "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", "application/jsonp",
]
ACCEPTED_TYPES = [
    "application/json", "Application/JSON", "APPLICATION/JSON", "application/json; charset=utf-8",
    "application/json;charset=UTF-8", 'application/json; charset="utf-8"', 'APPLICATION/Json;CHARSET="Utf-8"',
    "application/json ; charset=utf-8", "application/json;\tcharset=utf-8",
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("content_type", REFUSED_TYPES)
def test_a_body_not_declared_json_in_utf8_is_refused(
        gateway: int, path: str, content_type: str | None, request: pytest.FixtureRequest) -> None:  # noqa: F811
    before = audit_before(request)
    status, head, answer = send(gateway, path, "must-not-run", content_type)
    assert status == 415, (content_type, status, answer)
    assert head.get("content-type") == "application/json"
    assert answer["jsonrpc"] == "2.0" and answer["error"]["code"] == -32600
    assert "application/json" in answer["error"]["message"], answer
    audit_unchanged(request, before)  # nothing was decided, nothing ran


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("content_type", ACCEPTED_TYPES)
def test_json_in_utf8_is_taken_in_any_spelling(gateway: int, path: str, content_type: str) -> None:  # noqa: F811
    status, _, answer = send(gateway, path, "ran", content_type)
    assert status == 200 and ran(answer, "ran"), (content_type, answer)


@pytest.mark.parametrize("path", PATHS)
def test_content_type_sent_twice_is_refused(gateway: int, path: str) -> None:  # noqa: F811
    status, _, answer = send(gateway, path, "must-not-run", "application/json",
                                **{"Content-Type": "application/json; charset=utf-16"})
    assert status == 415 and answer["error"]["code"] == -32600, answer


def test_a_utf16_body_is_not_read(gateway: int) -> None:  # noqa: F811
    body = json.dumps(call("tb__echo", {"text": "must-not-run"}, 9)).encode("utf-16")
    headers = list(headers_for("tb__echo").items())
    status, _, raw = exchange(gateway, body, [(k, v) for k, v in headers if k != "Content-Type"]
                              + [("Content-Type", "application/json; charset=utf-16")])
    assert status == 415 and "must-not-run" not in raw


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("token", [True, False, 1.5, 1.0, 1e3, None, {}, {"a": 1}, [], ["p"], [1]])
def test_a_progress_token_not_a_string_or_integer_is_refused(
        gateway: int, path: str, token: Any, request: pytest.FixtureRequest) -> None:  # noqa: F811
    before = audit_before(request)
    status, _, answer = send(gateway, path, "must-not-run", meta={"progressToken": token})
    assert status == 400, (token, status, answer)
    assert answer["error"]["code"] == -32602 and "progress" in answer["error"]["message"], answer
    assert answer["id"] == 9
    audit_unchanged(request, before)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("token", ["p2", "", 0, -3, 2**40])
def test_a_string_or_integer_progress_token_is_taken(gateway: int, path: str, token: Any) -> None:  # noqa: F811
    status, _, answer = send(gateway, path, "ran", meta={"progressToken": token})
    assert status == 200 and ran(answer, "ran"), (token, answer)


def _sealed(port: int, path: str, label: str) -> str:
    """The sealed id Sentinel gives back for a call in conversation ``label``."""
    status, _, answer = send(port, path, "ran", **{"X-Sentinel-Session": label})
    assert status == 200 and ran(answer, "ran"), answer
    return str(answer["result"]["_meta"][SESSION_KEY])


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("meta_key,header", [
    ("work", "home"), ("home", "work"), ("work", "work2"), ("work", "Work"), ("sealed:home", "work"),
    ("work", "sealed:home"), ("sealed:home", "sealed:work"), ("work", "bad key!")])
def test_meta_and_header_naming_different_conversations_are_refused(
        gateway: int, path: str, meta_key: str, header: str) -> None:  # noqa: F811
    def key(k: str) -> str:
        return _sealed(gateway, path, k.split(":", 1)[1]) if k.startswith("sealed:") else k

    meta_text, header_text = key(meta_key), key(header)  # the sealed ones got by calls of their own
    before = audit_count()
    status, _, answer = send(gateway, path, "must-not-run", meta={SESSION_KEY: meta_text},
                                **{"X-Sentinel-Session": header_text})
    result = answer["result"]
    assert status == 200 and result.get("isError"), answer
    assert result["content"][0]["text"].startswith("sentinel:") and "must-not-run" not in json.dumps(result)
    assert result["_meta"]["sentinel/error"] == "session_refused", result
    assert audit_count() == before


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("meta_key,header", [("work", "work"), ("work", " work "), ("sealed:work", "work"),
                                             ("work", "sealed:work"), ("sealed:work", "sealed:work")])
def test_meta_and_header_naming_the_same_conversation_go_on(
        gateway: int, path: str, meta_key: str, header: str) -> None:  # noqa: F811
    def key(k: str) -> str:
        return _sealed(gateway, path, k.split(":", 1)[1]) if k.startswith("sealed:") else k

    status, _, answer = send(gateway, path, "ran", meta={SESSION_KEY: key(meta_key)},
                                **{"X-Sentinel-Session": key(header)})
    assert status == 200 and ran(answer, "ran"), answer


BAD_TOKENS = [True, False, 1.5, 1.0, None, {}, {"a": 1}, [], ["p"]]


def test_stdio_refuses_a_progress_token_not_a_string_or_integer(tmp_path: Any) -> None:
    """The same rule over stdio (the stdio transport parses with the same ``wire_limits``)."""
    from tests.gateway.test_lean_stdio_front import Wire, open_modern
    from tests.gateway.test_lean_stdio_front import call as stdio_call

    wire = Wire(tmp_path)
    try:
        open_modern(wire)
        before = len(audit_rows(wire.store))
        for i, token in enumerate(BAD_TOKENS):
            wire.send(stdio_call(f"bad{i}", "tb__echo", {"text": "must-not-run"}, token=token)
                      if token is not None else _with_null_token(f"bad{i}", stdio_call))
            answer = wire.answer(f"bad{i}")
            assert answer.get("error", {}).get("code") == -32602, (token, answer)
        assert len(audit_rows(wire.store)) == before  # nothing was decided, nothing ran
        wire.send(stdio_call("good", "tb__echo", {"text": "ran"}, token=7))
        assert ran(wire.answer("good"), "ran")
    finally:
        wire.close()


def _with_null_token(rid: str, stdio_call: Any) -> dict[str, Any]:
    message: dict[str, Any] = stdio_call(rid, "tb__echo", {"text": "must-not-run"})
    message["params"]["_meta"]["progressToken"] = None
    return message


async def test_the_legacy_sse_front_takes_json_in_utf8_only(tmp_path: Any) -> None:
    """``/messages/`` (the handshake-era SSE transport): the same rule there (its own check took a prefix,
    with a 400)."""
    import asyncio

    from tests.identity.identity_rig import ALICE, http_sentinel, write_config

    with http_sentinel(write_config(tmp_path)) as (base, _proc):
        port = int(base.rsplit(":", 1)[1])
        stream, stream_writer = await asyncio.open_connection("127.0.0.1", port)
        stream_writer.write(f"GET /sse HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                            f"Authorization: Bearer {ALICE}\r\n\r\n".encode())
        seen = b""
        while b"session_id=" not in seen or not seen.split(b"session_id=")[1].count(b"\r\n"):
            seen += await asyncio.wait_for(stream.read(512), 20)
        sid = seen.split(b"session_id=")[1].split(b"\r\n")[0].decode()

        ids = iter(range(1, 10_000))

        async def post(content_type: str | None) -> tuple[int, bytes]:
            # an id of its own each: a ping taken is answered on the stream, and an id still in flight there
            # is refused (in_flight_ids), whatever the Content-Type
            body = json.dumps({"jsonrpc": "2.0", "id": next(ids), "method": "ping"}).encode()
            typed = f"Content-Type: {content_type}\r\n" if content_type is not None else ""
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write((f"POST /messages/?session_id={sid} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                          f"Authorization: Bearer {ALICE}\r\n{typed}Content-Length: {len(body)}\r\n"
                          "Connection: close\r\n\r\n").encode() + body)
            answer = await asyncio.wait_for(reader.read(), 20)
            writer.close()
            head, _, rest = answer.partition(b"\r\n\r\n")
            return int(head.split()[1]), rest

        for content_type in REFUSED_TYPES:
            status, rest = await post(content_type)
            assert status == 415 and json.loads(rest)["error"]["code"] == -32600, (content_type, status, rest)
        for content_type in ACCEPTED_TYPES:
            status, rest = await post(content_type)
            assert status == 202, (content_type, status, rest)
        stream_writer.close()
