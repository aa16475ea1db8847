"""What a message's ``params``, ``params._meta``, ``_meta.progressToken`` and ``id`` may be, on every front
(streamable HTTP in both eras, on the lean paths and the SDK's, the legacy SSE ``/messages/``, stdio), over
real HTTP on 127.0.0.1 and a real stdio ``serve``:

- ``params`` is an object when sent (JSON-RPC 2.0 and MCP have no positional params; ``null`` is no
  object): anything else is an invalid request (-32600) and runs nothing;
- ``params._meta`` is an object when sent: an array, a text, a number, a boolean or null is invalid params
  (-32602, naming ``_meta``) on every method, notifications too (a notification is dropped, answered with id
  null where an answer can be given). On a handshake-era session the SDK answered "Invalid request
  parameters" without saying why, and ran a ``tools/call`` or ``tools/list`` with ``"_meta": null``;
- a progress token is a JSON-safe integer (|n| <= 2**53 - 1: a client in JavaScript reads a larger one as
  another number, and answers progress under a token it never sent) or a text of at most 1,000 characters
  that can be written back (no lone surrogate): anything else, ``true`` (Python's bool is an int) or a
  100-digit integer included, is invalid params. Before, every integer up to the wire's 100 digits and a
  text of any length went on;
- an ``id`` that is not a string or an integer (a boolean, a float, null, an array, an object) or is past the
  wire's bounds gets an error answer with id null, never a crash, never an answer under a guessed id. An
  integer id is held to the progress token's JSON-safe bound (|n| <= 2**53 - 1): a client in JavaScript
  reads a larger one as another number, and would match the answer to a request it never sent (any integer
  of 64 bits was taken before).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.gateway.test_front_strict_requests import (
    INIT, LEGACY, answer_of, audit_before, audit_unchanged, exchange, session_id,
)
from tests.gateway.test_lean_calls import ENVELOPE, TOKEN, gateway  # noqa: F401 - its fixture
from tests.records.rig import audit_rows

pytestmark = pytest.mark.timeout(180)

PATHS = ("lean", "sdk", "session-lean", "session-sdk")
NOT_OBJECTS = [[], ["x"], [ENVELOPE], "x", "", "{}", 5, 0, -1, 1.5, True, False, None]
BAD_TOKENS = [2**53, -(2**53), 2**60, -(2**63), 10**99, -(10**99), "t" * 1001, "\ud800", "a\udfffb", True,
              False, 1.0, 0.0, 1e300]
GOOD_TOKENS = [2**53 - 1, -(2**53 - 1), 0, "t" * 1000, "p\u00e9\U0001f600"]
BAD_IDS = [True, False, 1.0, -0.0, 1.5, 1e3, 9007199254740991.0, None, [], [1], {}, {"id": 1},
           [[{"a": 1}]], 2**53, -(2**53), 2**60, 2**63 - 1, -(2**63), 2**64 - 1, 2**64, -(2**64), 10**99,
           "i" * 1001, "\ud800"]
GOOD_IDS = [0, -1, 2**53 - 1, -(2**53 - 1), "", "i" * 1000, "9007199254740993", "p\u00e9\U0001f600"]


def _headers(path: str, method: str) -> list[tuple[str, str]]:
    base = [("Authorization", f"Bearer {TOKEN}"), ("Accept", "application/json, text/event-stream"),
            ("Content-Type", "application/json")]
    if path.startswith("session"):
        return base  # the session's id and version are added by ``send``
    named = [("Mcp-Name", "tb__echo")] if method == "tools/call" else []
    return base + [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", method)] + named


def send(port: int, path: str, message: dict[str, Any] | bytes) -> tuple[int, Any]:
    method = message.get("method", "") if isinstance(message, dict) else "tools/call"
    headers = _headers(path, str(method))
    if path.startswith("session"):
        headers += [("Mcp-Session-Id", session_id(port)), ("MCP-Protocol-Version", LEGACY)]
    raw = message if isinstance(message, bytes) else json.dumps(message).encode()
    status, _, text = exchange(port, raw, headers)
    return status, answer_of(text) if text else None


def echo_call(path: str, meta: Any = ..., *, rid: Any = 9, token: Any = ...) -> dict[str, Any]:
    """``tb__echo`` of "must-not-run" on ``path``: its ``_meta`` replaced by ``meta`` when given, else the
    path's own (the 2026 envelope on the 2026 paths; a progress token sends it the SDK's way)."""
    own: dict[str, Any] = {} if path.startswith("session") else dict(ENVELOPE)
    if path.endswith("sdk"):
        own["progressToken"] = "p1"
    if token is not ...:
        own["progressToken"] = token
    params: dict[str, Any] = {"name": "tb__echo", "arguments": {"text": "must-not-run"}}
    if meta is not ...:
        params["_meta"] = meta
    elif own:
        params["_meta"] = own
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def refused_params(answer: Any, rid: Any, code: int, word: str) -> bool:
    if not isinstance(answer, dict) or not isinstance(answer.get("error"), dict):
        return False
    error = answer["error"]
    return answer.get("id") == rid and error.get("code") == code and word in str(error.get("message"))


# ---------------------------------------------------------------------------------------------- _meta


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("meta", NOT_OBJECTS, ids=repr)
def test_a_call_whose_meta_is_not_an_object_is_invalid_params(
        gateway: int, path: str, meta: Any, request: pytest.FixtureRequest) -> None:  # noqa: F811
    before = audit_before(request)
    status, answer = send(gateway, path, echo_call(path, meta))
    assert status == 400 and refused_params(answer, 9, -32602, "_meta"), (meta, status, answer)
    audit_unchanged(request, before)  # nothing was decided, nothing ran


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("method,params", [
    ("tools/list", {}), ("resources/list", {}), ("resources/read", {"uri": "file:///x"}),
    ("prompts/list", {}), ("prompts/get", {"name": "p"}), ("ping", {}),
    ("completion/complete",
     {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}),
])
@pytest.mark.parametrize("meta", [[], "x", True, None], ids=repr)  # every kind: the call's test above
def test_any_request_whose_meta_is_not_an_object_is_invalid_params(
        gateway: int, path: str, method: str, params: dict[str, Any], meta: Any) -> None:  # noqa: F811
    message = {"jsonrpc": "2.0", "id": "m", "method": method, "params": {**params, "_meta": meta}}
    status, answer = send(gateway, path, message)
    assert status == 400 and refused_params(answer, "m", -32602, "_meta"), (method, meta, status, answer)


@pytest.mark.parametrize("meta", [[], "x", 5, False, None], ids=repr)
def test_an_initialize_whose_meta_is_not_an_object_opens_no_session(gateway: int, meta: Any) -> None:  # noqa: F811
    message = {**INIT, "params": {**INIT["params"], "_meta": meta}}
    base = _headers("session", "initialize")
    status, head, text = exchange(gateway, json.dumps(message).encode(), base)
    answer = answer_of(text)
    assert status == 400 and refused_params(answer, 0, -32602, "_meta"), (meta, status, answer)
    assert "mcp-session-id" not in head


@pytest.mark.parametrize("params", [
    {"protocolVersion": 5, "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
    {"protocolVersion": LEGACY, "capabilities": [], "clientInfo": {"name": "x", "version": "1"}},
    {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": "x"},
    {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": 5, "version": "1"}},
    {"protocolVersion": LEGACY}, {}, ...,
], ids=repr)
def test_a_refused_initialize_opens_no_session(gateway: int, params: Any) -> None:  # noqa: F811
    """The SDK's session manager issued an ``Mcp-Session-Id`` (and kept its session until idle) for a
    handshake its own validation then refused."""
    message = {"jsonrpc": "2.0", "id": 0, "method": "initialize"}
    if params is not ...:
        message["params"] = params
    status, head, text = exchange(gateway, json.dumps(message).encode(), _headers("session", "initialize"))
    answer = answer_of(text)
    assert status == 400 and refused_params(answer, 0, -32602, "initialize"), (params, status, answer)
    assert "mcp-session-id" not in head


def test_a_valid_initialize_still_opens_a_session(gateway: int) -> None:  # noqa: F811
    status, head, text = exchange(gateway, json.dumps(INIT).encode(), _headers("session", "initialize"))
    assert status == 200 and head.get("mcp-session-id") and "result" in answer_of(text)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("method", ["notifications/initialized", "notifications/cancelled",
                                    "notifications/roots/list_changed", "notifications/progress"])
@pytest.mark.parametrize("meta", [[], "x", 0, None], ids=repr)
def test_a_notification_whose_meta_is_not_an_object_is_dropped_with_an_error(
        gateway: int, path: str, method: str, meta: Any) -> None:  # noqa: F811
    params: dict[str, Any] = {"_meta": meta}
    if method == "notifications/cancelled":
        params["requestId"] = 9
    if method == "notifications/progress":
        params.update(progressToken="p1", progress=1)
    status, answer = send(gateway, path, {"jsonrpc": "2.0", "method": method, "params": params})
    assert status == 400 and refused_params(answer, None, -32602, "_meta"), (method, meta, status, answer)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("params", [[], [1], ["tb__echo", {"text": "x"}], "x", 5, True, None], ids=repr)
@pytest.mark.parametrize("method", ["tools/call", "tools/list", "ping"])
def test_params_that_are_not_an_object_are_an_invalid_request(
        gateway: int, path: str, params: Any, method: str, request: pytest.FixtureRequest) -> None:  # noqa: F811
    before = audit_before(request)
    status, answer = send(gateway, path, {"jsonrpc": "2.0", "id": 4, "method": method, "params": params})
    assert status == 400 and refused_params(answer, 4, -32600, "params must be an object"), (params, answer)
    audit_unchanged(request, before)  # nothing was decided, nothing ran


@pytest.mark.parametrize("path", PATHS)
def test_an_object_meta_still_runs(gateway: int, path: str) -> None:  # noqa: F811
    message = echo_call(path)
    message["params"]["arguments"]["text"] = "ran"
    status, answer = send(gateway, path, message)
    assert status == 200 and answer["result"]["content"][0]["text"] == "ran", answer


# ---------------------------------------------------------------------------------------------- progressToken


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("token", BAD_TOKENS, ids=lambda t: repr(t)[:40])
def test_a_progress_token_past_the_json_safe_bounds_is_invalid_params(
        gateway: int, path: str, token: Any, request: pytest.FixtureRequest) -> None:  # noqa: F811
    before = audit_before(request)
    status, answer = send(gateway, path, echo_call(path, token=token))
    assert status == 400 and refused_params(answer, 9, -32602, "progressToken"), (token, status, answer)
    audit_unchanged(request, before)  # nothing was decided, nothing ran


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("token", GOOD_TOKENS, ids=lambda t: repr(t)[:40])
def test_a_progress_token_within_the_bounds_is_taken(gateway: int, path: str, token: Any) -> None:  # noqa: F811
    message = echo_call(path, token=token)
    message["params"]["arguments"]["text"] = "ran"
    status, answer = send(gateway, path, message)
    assert status == 200 and answer["result"]["content"][0]["text"] == "ran", (token, answer)


@pytest.mark.parametrize("path", PATHS)
def test_a_progress_token_of_thousands_of_digits_is_a_parse_error(gateway: int, path: str) -> None:  # noqa: F811
    # past Python's own int-from-text limit (4,300 digits): refused by the wire's bound before int() runs
    raw = json.dumps(echo_call(path, token=0)).replace('"progressToken": 0', '"progressToken": ' + "9" * 5000)
    status, answer = send(gateway, path, raw.encode())
    assert status == 400 and answer["id"] is None and answer["error"]["code"] == -32700, answer


# ---------------------------------------------------------------------------------------------- ids


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("rid", BAD_IDS, ids=lambda r: repr(r)[:40])
def test_an_invalid_id_is_answered_with_id_null(
        gateway: int, path: str, rid: Any, request: pytest.FixtureRequest) -> None:  # noqa: F811
    before = audit_before(request)
    status, answer = send(gateway, path, echo_call(path, rid=rid))
    assert status == 400 and answer["id"] is None and answer["error"]["code"] == -32600, (rid, status, answer)
    audit_unchanged(request, before)  # nothing was decided, nothing ran


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("rid", GOOD_IDS, ids=lambda r: repr(r)[:40])
def test_an_id_within_the_bounds_is_answered_under_it(gateway: int, path: str, rid: Any) -> None:  # noqa: F811
    message = echo_call(path, rid=rid)
    message["params"]["arguments"]["text"] = "ran"
    status, answer = send(gateway, path, message)
    assert status == 200 and answer["id"] == rid and answer["result"]["content"][0]["text"] == "ran", answer


@pytest.mark.parametrize("path", PATHS)
def test_an_id_of_thousands_of_digits_is_a_parse_error_with_id_null(gateway: int, path: str) -> None:  # noqa: F811
    raw = json.dumps(echo_call(path, rid=0)).replace('"id": 0', '"id": ' + "7" * 5000)
    status, answer = send(gateway, path, raw.encode())
    assert status == 400 and answer["id"] is None and answer["error"]["code"] == -32700, answer


# ---------------------------------------------------------------------------------------------- stdio, SSE


def test_stdio_holds_meta_tokens_and_ids_to_the_same_rules(tmp_path: Path) -> None:
    from tests.gateway.test_lean_stdio_front import Wire, open_modern

    LISTING = {"_meta": ENVELOPE}
    wire = Wire(tmp_path)
    try:
        open_modern(wire)
        before = len(audit_rows(wire.store))
        for i, meta in enumerate(NOT_OBJECTS):
            for method in ("tools/call", "tools/list"):
                rid = f"meta-{method}-{i}"
                params = {"name": "tb__echo", "arguments": {"text": "must-not-run"}, "_meta": meta}
                wire.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
                assert refused_params(wire.answer(rid), rid, -32602, "_meta"), (method, meta)
        for i, token in enumerate(BAD_TOKENS):
            rid = f"token-{i}"
            wire.send(echo_call("lean", rid=rid, token=token))
            assert refused_params(wire.answer(rid), rid, -32602, "progressToken"), token
        for i, params in enumerate([[], [1], "x", 5, None]):
            rid = f"params-{i}"
            wire.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
            assert refused_params(wire.answer(rid), rid, -32600, "params must be an object"), params
        for rid in BAD_IDS:
            wire.early = []
            wire.send(echo_call("lean", rid=rid))
            wire.send({"jsonrpc": "2.0", "id": "marker", "method": "tools/list", "params": LISTING})
            assert "result" in wire.answer("marker")
            assert any(refused_params(f, None, -32600, "") for f in wire.early), rid
        wire.early = []
        cancelled = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 1, "_meta": []}}
        wire.send(cancelled)
        wire.send({"jsonrpc": "2.0", "id": "marker2", "method": "tools/list", "params": LISTING})
        assert "result" in wire.answer("marker2")
        assert any(refused_params(f, None, -32602, "_meta") for f in wire.early)
        assert len(audit_rows(wire.store)) == before  # nothing was decided, nothing ran
        for rid in GOOD_IDS:
            message = echo_call("lean", rid=rid)
            message["params"]["arguments"]["text"] = "ran"
            wire.send(message)
            assert wire.answer(rid)["result"]["content"][0]["text"] == "ran", rid
        for token in GOOD_TOKENS:
            message = echo_call("lean", rid="good", token=token)
            message["params"]["arguments"]["text"] = "ran"
            wire.send(message)
            assert wire.answer("good")["result"]["content"][0]["text"] == "ran", token
    finally:
        wire.close()


async def test_the_legacy_sse_front_holds_meta_and_tokens_to_the_same_rules(gateway: int) -> None:  # noqa: F811
    """``/messages/``: the refusal is the POST's answer (400), never sent on the stream as a call's."""
    port = gateway
    stream, stream_writer = await asyncio.open_connection("127.0.0.1", port)
    stream_writer.write(f"GET /sse HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                        f"Authorization: Bearer {TOKEN}\r\n\r\n".encode())
    seen = b""
    while b"session_id=" not in seen or not seen.split(b"session_id=")[1].count(b"\r\n"):
        seen += await asyncio.wait_for(stream.read(512), 20)
    sid = seen.split(b"session_id=")[1].split(b"\r\n")[0].decode()

    async def post(message: dict[str, Any]) -> tuple[int, bytes]:
        body = json.dumps(message).encode()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write((f"POST /messages/?session_id={sid} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                      f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
                      f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body)
        answer = await asyncio.wait_for(reader.read(), 20)
        writer.close()
        head, _, rest = answer.partition(b"\r\n\r\n")
        return int(head.split()[1]), rest

    try:
        for i, meta in enumerate([[], "x", 5, True, None]):
            status, rest = await post({"jsonrpc": "2.0", "id": 100 + i, "method": "ping",
                                       "params": {"_meta": meta}})
            assert status == 400 and refused_params(json.loads(rest), 100 + i, -32602, "_meta"), (meta, rest)
        for i, token in enumerate(BAD_TOKENS):
            params = {"name": "tb__echo", "arguments": {"text": "x"}, "_meta": {"progressToken": token}}
            message = {"jsonrpc": "2.0", "id": 200 + i, "method": "tools/call", "params": params}
            status, rest = await post(message)
            assert status == 400 and refused_params(json.loads(rest), 200 + i, -32602, "progressToken"), token
        for rid in BAD_IDS:
            status, rest = await post({"jsonrpc": "2.0", "id": rid, "method": "ping"})
            assert status == 400 and json.loads(rest)["id"] is None, (rid, rest)
        status, _ = await post({"jsonrpc": "2.0", "id": 300, "method": "ping", "params": {"_meta": {}}})
        assert status == 202
    finally:
        stream_writer.close()
