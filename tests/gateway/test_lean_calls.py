"""The lean HTTP path for 2026-07-28 single-request ``tools/call`` (app/lean_calls.py): it answers as the SDK
does, keeps every check in front of it, and hands every other shape to the SDK.

The same call is sent twice: plain (the lean path) and with a progress token in ``_meta`` (which the lean
path leaves to the SDK; a tool that reports no progress gets the same JSON answer there). Answers are
compared whole, with only the per-call random values (decision ids, sealed session, request state) masked:
same status, same content type, the same keys in the same order, the same compact encoding.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult

from sentinel_mcp.app.lean_calls import _lean_request
from sentinel_mcp.gateway import telemetry
from sentinel_mcp.gateway.unspanned_kernel import UnspannedRunner, span_records_nothing
from sentinel_mcp.core.call_meta import SESSION_KEY
from sentinel_mcp.gateway.call_record import META_KEY
from tests.conftest import free_port, stop_process, wait_http
from tests.gateway.helpers import TOOLBOX
from tests.records.rig import audit_rows

pytestmark = pytest.mark.timeout(120)

TOKEN = "lean-owner-token-0123456789"
MODERN = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "lean-test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
RANDOM_KEYS = {SESSION_KEY, META_KEY, "requestState", "decision_id"}
LAST_TEXT = [""]  # the raw body of the last answer
STORE: list[Path] = [Path()]  # the gateway's store (its audit), once the fixture started it


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp: Path = tmp_path_factory.mktemp("lean")
    cfg = tmp / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
                               "sentinel": {"data_dir": str(tmp / "state"), "http": {"token": TOKEN}}}))
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc)
        STORE[0] = tmp / "state" / "sentinel.db"
        yield port
    finally:
        stop_process(proc)


def headers_for(name: str, **extra: str) -> dict[str, str]:
    return {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name,
            "Authorization": f"Bearer {TOKEN}", **extra}


Headers = dict[str, str] | list[tuple[str, str]]


def post(port: int, body: bytes | str, headers: Headers) -> tuple[int, str, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        own_host = isinstance(headers, dict) and "Host" in headers
        conn.putrequest("POST", "/mcp", skip_host=own_host)
        data = body.encode() if isinstance(body, str) else body
        for k, v in (headers.items() if isinstance(headers, dict) else headers):
            conn.putheader(k, v)
        conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        r = conn.getresponse()
        text = LAST_TEXT[0] = r.read().decode()
        ctype = r.getheader("content-type") or ""
    finally:
        conn.close()
    try:
        parsed = json.loads(text) if text else None
    except ValueError:
        parsed = text
    return r.status, ctype, parsed


def call(name: str, arguments: Any, rid: Any = 7, *, via_sdk: bool = False, **params: Any) -> dict[str, Any]:
    meta = {**ENVELOPE, **({"progressToken": "p1"} if via_sdk else {})}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta, **params}}


def masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("<random>" if k in RANDOM_KEYS else masked(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


def wire_form(text: str) -> Any:
    """The body as ordered pairs, random values masked; and it must be the compact encoding the SDK writes."""
    assert text == json.dumps(json.loads(text), separators=(",", ":"))

    def pairs(items: list[tuple[str, Any]]) -> Any:
        return [(k, "<random>" if k in RANDOM_KEYS else v) for k, v in items]
    return json.loads(text, object_pairs_hook=pairs)


@pytest.mark.parametrize("name,arguments", [
    ("tb__echo", {"text": "hello"}), ("tb__noop", {}), ("tb__add", {"a": 1, "b": 2.5}),
    ("tb__delete_thing", {"name": "x"}),  # the policy asks: an input-required result
    ("tb__no_such_tool", {}), ("tb__add", {"a": "not a number"}), ("tb__echo", {"text": "é\u2028<script>"}),
])
def test_lean_and_sdk_paths_answer_alike(gateway: int, name: str, arguments: Any) -> None:
    lean = post(gateway, json.dumps(call(name, arguments)), headers_for(name))
    lean_wire = wire_form(LAST_TEXT[0])
    sdk = post(gateway, json.dumps(call(name, arguments, via_sdk=True)), headers_for(name))
    assert lean[0] == sdk[0] and lean[1] == sdk[1] == "application/json"
    assert masked(lean[2]) == masked(sdk[2]) and lean_wire == wire_form(LAST_TEXT[0])
    assert lean[2]["id"] == 7 and ("result" in lean[2] or "error" in lean[2])
    if name == "tb__echo" and "result" in lean[2]:
        assert lean[2]["result"]["_meta"][META_KEY]  # the audit record it names


@pytest.mark.parametrize("params", [
    {"name": 5, "arguments": {}}, {"name": "tb__echo", "arguments": ["a"]},
    {"name": "tb__echo", "arguments": 3},
    {"arguments": {}},
])
def test_wrong_types_get_the_sdks_error(gateway: int, params: dict[str, Any]) -> None:
    bodies = []
    for via_sdk in (False, True):
        message = call("tb__echo", {}, via_sdk=via_sdk)
        message["params"] = {**params, "_meta": message["params"]["_meta"]}
        name = params.get("name") if isinstance(params.get("name"), str) else "tb__echo"
        bodies.append(post(gateway, json.dumps(message), headers_for(str(name))))
    assert bodies[0][0] == bodies[1][0] and bodies[0][2] == bodies[1][2]
    assert "error" in bodies[0][2] or bodies[0][2]["result"].get("isError") is True


@pytest.mark.parametrize("label,raw,headers", [
    ("not json", b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ", None),
    ("batch", json.dumps([call("tb__echo", {"text": "a"})]), None),
    ("huge id", json.dumps(call("tb__echo", {"text": "a"})).replace('"id": 7', '"id": ' + "9" * 500), None),
    ("object id", json.dumps(call("tb__echo", {"text": "a"}, rid={"x": 1})), None),
    ("bool id", json.dumps(call("tb__echo", {"text": "a"}, rid=True)), None),
    ("float id", json.dumps(call("tb__echo", {"text": "a"}, rid=1.5)), None),
    ("no protocol header", json.dumps(call("tb__echo", {"text": "a"})),
     {k: v for k, v in headers_for("tb__echo").items() if k != "MCP-Protocol-Version"}),
    ("other version header", json.dumps(call("tb__echo", {"text": "a"})),
     headers_for("tb__echo", **{"MCP-Protocol-Version": "2026-07-29"})),
    ("name header mismatch", json.dumps(call("tb__echo", {"text": "a"})), headers_for("tb__noop")),
    ("method header mismatch", json.dumps(call("tb__echo", {"text": "a"})),
     headers_for("tb__echo", **{"Mcp-Method": "tools/list"})),
    ("envelope version mismatch", json.dumps(call("tb__echo", {"text": "a"})).replace(MODERN, "2025-11-25"),
     None),
    ("no envelope", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                "params": {"name": "tb__echo", "arguments": {"text": "a"}}}), None),
    ("text content type", json.dumps(call("tb__echo", {"text": "a"})),
     headers_for("tb__echo", **{"Content-Type": "text/plain"})),
    ("json only accept", json.dumps(call("tb__echo", {"text": "a"})),
     headers_for("tb__echo", Accept="application/json")),
    ("oversized", json.dumps(call("tb__echo", {"text": "a" * 5_000_000})), None),
    ("jsonrpc 1.0", json.dumps(call("tb__echo", {"text": "a"})).replace('"2.0"', '"1.0"'), None),
])
def test_malformed_calls_always_get_an_answer(gateway: int, label: str, raw: Any, headers: Any) -> None:
    status, _, body = post(gateway, raw, headers or headers_for("tb__echo"))
    assert status < 500, (label, status, body)
    if status == 200:  # a JSON-RPC answer, never a result for a call that was malformed
        assert isinstance(body, dict) and "error" in body, (label, body)
    else:
        assert status in (400, 404, 406, 413, 415), (label, status, body)


def test_a_lean_call_is_audited_before_its_answer(gateway: int) -> None:
    message = json.dumps(call("tb__echo", {"text": "audited"}))
    status, _, body = post(gateway, message, headers_for("tb__echo"))
    assert status == 200 and body["result"]["content"][0]["text"] == "audited"
    decision = body["result"]["_meta"][META_KEY]
    events = [r["event"] for r in audit_rows(STORE[0]) if r["decision_id"] == decision]
    assert len(events) >= 2, events  # the decision (written ahead of the call) and the outcome


def test_duplicated_routing_header_is_refused(gateway: int) -> None:
    h = [(k, v) for k, v in headers_for("tb__echo").items()] + [("Mcp-Name", "tb__noop")]
    status, _, body = post(gateway, json.dumps(call("tb__echo", {"text": "a"})), h)
    assert status == 400 and "error" in body


@pytest.mark.parametrize("extra,expected", [
    ({"Authorization": ""}, 401), ({"Authorization": "Bearer forged-token-0123456789"}, 401),
    ({"Authorization": f"Basic {TOKEN}"}, 401), ({"Host": "evil.example"}, 421),
    ({"Host": "127.0.0.1:1"}, 421), ({"Origin": "http://evil.example"}, 403), ({"Origin": "null"}, 403),
])
def test_lean_calls_stay_behind_the_caller_checks(gateway: int, extra: dict[str, str], expected: int) -> None:
    h = headers_for("tb__echo", **extra)
    if not h["Authorization"]:
        del h["Authorization"]
    status, _, body = post(gateway, json.dumps(call("tb__echo", {"text": "a"})), h)
    assert status == expected and "result" not in (body or {})


async def approve(ctx: Any, params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"approve": True})


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_real_client_both_eras(gateway: int, mode: str) -> None:
    target = streamable_http_client(f"http://127.0.0.1:{gateway}/mcp", http_client=httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30))
    async with Client(target, mode=mode, elicitation_callback=approve) as c:
        assert (await c.call_tool("tb__echo", {"text": mode})).content[0].text == mode
        # asked by the policy: pushed (handshake era) or an input-required round (2026-07-28, the lean path)
        assert (await c.call_tool("tb__delete_thing", {"name": mode})).content[0].text == f"deleted {mode}"
        refused = await c.call_tool("tb__no_such_tool", {})
        assert refused.is_error


def _scope(headers: dict[str, str], path: str = "/mcp") -> dict[str, Any]:
    return {"type": "http", "method": "POST", "path": path,
            "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()]}


def test_only_the_common_call_takes_the_lean_path() -> None:
    ok = call("tb__echo", {"text": "a"})
    assert _lean_request(_scope(headers_for("tb__echo")), ok)
    assert not _lean_request(_scope(headers_for("tb__echo"), "/mcp/"), ok)
    assert not _lean_request(_scope(headers_for("tb__echo", **{"Mcp-Session-Id": "s"})), ok)
    assert not _lean_request(_scope(headers_for("tb__echo", **{"Mcp-Param-Text": "a"})), ok)
    assert not _lean_request(_scope(headers_for("tb__echo", Accept="application/json")), ok)
    assert not _lean_request(_scope(headers_for("tb__echo")), call("tb__echo", {}, via_sdk=True))
    logged = call("tb__echo", {})
    logged["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = "debug"
    assert not _lean_request(_scope(headers_for("tb__echo")), logged)
    assert not _lean_request(_scope(headers_for("tb__echo")), {**ok, "method": "tools/list"})
    assert not _lean_request(_scope(headers_for("tb__echo")), {k: v for k, v in ok.items() if k != "id"})
    assert not _lean_request(_scope(headers_for("tb__echo")), {**ok, "id": True})


def test_a_kept_accept_verdict_is_the_rules_and_the_kept_ones_are_bounded() -> None:
    """The lean path keeps its verdict on each short Accept value it saw (the same value on every call): asked
    again, it answers what the SDK's Accept rule answers; values past the bound or too long are judged each
    time and never kept."""
    from sentinel_mcp.app import lean_calls

    ok = call("tb__echo", {"text": "a"})
    accepts = ["application/json, text/event-stream", "application/json", "text/event-stream", "*/*",
               "application/*, text/*", "application/jsonx, text/event-streamx", "x" * 300 + ", */*"]
    accepts += [f"application/json, text/event-stream;q=0.{i}" for i in range(80)]
    for _ in range(2):  # the second time from the kept verdicts
        for accept in accepts:
            want = lean_calls._accepts_json_and_sse(accept)
            assert bool(_lean_request(_scope(headers_for("tb__echo", Accept=accept)), ok)) == want, accept
    assert len(lean_calls._ACCEPTS) <= lean_calls.MAX_ACCEPTS_KEPT
    assert all(len(k) <= lean_calls.MAX_KEPT_ACCEPT for k in lean_calls._ACCEPTS)


def test_the_span_is_left_out_only_when_it_records_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry import trace

    # none installed, whatever a test before this one in the process installed (the API's global is set once)
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
    monkeypatch.setattr(telemetry, "_PROVIDER_FROM_ENV", False)
    assert span_records_nothing(ENVELOPE)
    assert span_records_nothing({})
    assert span_records_nothing({**ENVELOPE, "progressToken": 3})  # no trace context in it
    assert span_records_nothing({"progressToken": 3, "sentinel/principal": "owner"})  # to a built-in
    for extra in ({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                  {"tracestate": "a=b"}, {"baggage": "k=v"}, {"b3": "1-2-1"}, {"x": None},
                  {"sentinel": 1}, {"uber-trace-id": "a:b:0:1"}):
        assert not span_records_nothing({**ENVELOPE, **extra}), extra
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", trace.NoOpTracerProvider())  # one installed (its global)
    assert not span_records_nothing(ENVELOPE)
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
    # one named in the environment (OTEL_PYTHON_TRACER_PROVIDER), loaded by the API on first use
    monkeypatch.setattr(telemetry, "_PROVIDER_FROM_ENV", True)
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: trace.NoOpTracerProvider())
    assert not span_records_nothing(ENVELOPE)


async def test_the_unspanned_runner_keeps_every_other_middleware() -> None:
    from mcp.server.connection import Connection
    from mcp.server.lowlevel.server import Server

    server: Any = Server("lean-kernel")
    seen: list[str] = []

    class Mark:
        def __init__(self, name: str) -> None:
            self.name = name

        async def __call__(self, ctx: Any, call_next: Any) -> Any:
            seen.append(self.name)
            return await call_next(ctx)

    server.middleware[:] = [Mark("outer"), *server.middleware, Mark("inner")]

    async def handler(ctx: Any) -> Any:
        seen.append("handler")
        return {"ok": ctx}

    runner = UnspannedRunner(server, Connection.from_envelope(MODERN, None, None), None)
    assert await runner._compose_server_middleware(handler)("ctx") == {"ok": "ctx"}
    assert seen == ["outer", "inner", "handler"]  # the span left out, the rest in order


@pytest.mark.parametrize("meta", [{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                                  {"com.example/extra": {"a": 1}}])
def test_a_call_the_span_may_matter_for_answers_alike(gateway: int, meta: dict[str, Any]) -> None:
    """Extra ``_meta`` keys keep the lean path but run the SDK's whole kernel: still the SDK's answer."""
    body = call("tb__echo", {"text": "traced"})
    body["params"]["_meta"].update(meta)
    lean = post(gateway, json.dumps(body), headers_for("tb__echo"))
    lean_wire = wire_form(LAST_TEXT[0])
    body["params"]["_meta"]["progressToken"] = "p1"  # the SDK's transport
    sdk = post(gateway, json.dumps(body), headers_for("tb__echo"))
    assert lean[0] == sdk[0] == 200 and masked(lean[2]) == masked(sdk[2])
    assert lean_wire == wire_form(LAST_TEXT[0])
