"""Every malformed message gets an answer on every front: stdio, streamable HTTP, SSE, A2A HTTP, WebSocket.
Also: a call an upstream would choke on never reaches it, so no breaker opens for anyone."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from .fuzz_corpus import OVERSIZED, corpus
from .rig import AUTH, ROOT, health, kill_tree, start_http, write_config

INIT = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
CASES = [*corpus(), ("oversized", OVERSIZED)]


def is_answer(frame: Any) -> bool:
    return (
        isinstance(frame, dict) and frame.get("jsonrpc") == "2.0" and ("error" in frame or "result" in frame)
    )


def _id_of(raw: bytes) -> Any:
    try:
        mid = json.loads(raw).get("id")
    except (ValueError, AttributeError, RecursionError):
        return None
    return mid if isinstance(mid, (str, int)) and not isinstance(mid, bool) and len(str(mid)) < 100 else None


def sse_frames(text: str) -> list[Any]:
    return [
        json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()
    ]


def _stdio_gateway(tmp_path: Path) -> subprocess.Popen:
    """``serve`` over stdio, its session initialized."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(write_config(tmp_path)), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    for message in (INIT, INITIALIZED):
        proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == "init"
    return proc


def test_stdio_answers_every_malformed_line(tmp_path: Path) -> None:
    proc = _stdio_gateway(tmp_path)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        unanswered = []
        for i, (name, raw) in enumerate(CASES):
            marker = f"m{i}"
            proc.stdin.write(
                raw + b"\n" + json.dumps({"jsonrpc": "2.0", "id": marker, "method": "ping"}).encode() + b"\n"
            )
            proc.stdin.flush()
            own = _id_of(raw)
            answers: list[Any] = []
            seen_marker = False

            def answered() -> bool:
                # a refusal comes before the marker's answer; a forwarded call's result may come after it
                return any(is_answer(a) and a.get("id") in (None, own) for a in answers)

            while not (seen_marker and (answered() or own is None)):
                frame = json.loads(proc.stdout.readline())
                if frame.get("id") == marker:
                    seen_marker = True
                else:
                    answers.append(frame)
            if not any(is_answer(a) for a in answers):
                unanswered.append(name)
        assert unanswered == []
    finally:
        kill_tree(proc)


async def _mcp_http(http: httpx2.AsyncClient, base: str) -> list[str]:
    head = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    r = await http.post(f"{base}/mcp", json=INIT, headers=head)
    head["mcp-session-id"] = r.headers["mcp-session-id"]
    head["mcp-protocol-version"] = "2025-06-18"
    await http.post(f"{base}/mcp", json=INITIALIZED, headers=head)
    bad = []
    for name, raw in CASES:
        r = await http.post(f"{base}/mcp", content=raw, headers=head)
        frames = (
            sse_frames(r.text)
            if r.headers.get("content-type", "").startswith("text/event-stream")
            else [r.json()]
            if r.headers.get("content-type", "").startswith("application/json")
            else []
        )
        if r.status_code >= 500 or not any(is_answer(f) for f in frames):
            bad.append(f"{name}: {r.status_code} {r.text[:80]!r}")
    return bad


async def _sse(http: httpx2.AsyncClient, base: str) -> list[str]:
    bad = []
    async with http.stream("GET", f"{base}/sse") as stream:
        lines = stream.aiter_lines()
        endpoint = None
        async for line in lines:
            if line.startswith("data:"):
                endpoint = line[5:].strip()
                break
        assert endpoint
        url = base + endpoint
        await http.post(url, json=INIT)
        await http.post(url, json=INITIALIZED)
        pending: set[Any] = set()
        for name, raw in CASES:
            r = await http.post(url, content=raw, headers={"content-type": "application/json"})
            if r.status_code == 202:  # accepted: the answer comes on the stream
                pending.add(json.loads(raw)["id"])
            elif r.status_code >= 500 or not is_answer(r.json()):
                bad.append(f"{name}: {r.status_code} {r.text[:80]!r}")

        async def drain() -> None:
            async for line in lines:
                if line.startswith("data:"):
                    pending.discard(json.loads(line[5:]).get("id"))
                    if not pending:
                        return

        if pending:
            await asyncio.wait_for(drain(), 30)
    return bad


async def _a2a(http: httpx2.AsyncClient, base: str) -> list[str]:
    bad = []
    for name, raw in CASES:
        r = await http.post(
            f"{base}/a2a", content=raw, headers={"A2A-Version": "1.0", "content-type": "application/json"}
        )
        if r.status_code >= 500 or not is_answer(r.json()):
            bad.append(f"{name}: {r.status_code} {r.text[:80]!r}")
    return bad


async def _ws(base: str) -> list[str]:
    bad = []
    async with connect(
        base.replace("http", "ws") + "/a2a/ws",
        subprotocols=["a2a.v1.json"],
        additional_headers={"A2A-Version": "1.0", **AUTH},
        max_size=16 << 20,
    ) as ws:
        for name, raw in CASES:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                await ws.send(raw)  # not text: a binary frame
            else:
                await ws.send(text)
            try:
                frame = json.loads(await asyncio.wait_for(ws.recv(), 15))
            except ConnectionClosed as e:  # past the frame bound: not read whole, closed as too big
                if not (name == "oversized" and e.rcvd is not None and e.rcvd.code == 1009):
                    bad.append(f"{name}: {type(e).__name__}")
                break
            except Exception as e:  # noqa: BLE001 - a hang or a dropped socket is the failure we look for
                bad.append(f"{name}: {type(e).__name__}")
                break
            if not is_answer(frame) or name == "oversized":  # (oversized: read whole, past the bound)
                bad.append(f"{name}: {str(frame)[:200]}")
    return bad


async def test_http_fronts_answer_every_malformed_message(tmp_path: Path) -> None:
    proc, port = start_http(write_config(tmp_path, timeout=60))
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx2.AsyncClient(timeout=30, headers=AUTH) as http:
            assert await _mcp_http(http, base) == []
            assert await _sse(http, base) == []
            assert await _a2a(http, base) == []
        assert await _ws(base) == []
        # nothing malformed reached the upstream or counted against it
        rec = health(port)["upstreams"]["rec"]
        assert rec["breaker"] == "closed" and rec["state"] == "ready"
    finally:
        kill_tree(proc)


async def test_an_upstream_answering_garbage_fails_the_call_at_once(tmp_path: Path) -> None:
    import anyio
    from mcp import Client

    from sentinel_mcp.config import parse_config
    from sentinel_mcp.app.runtime import running_gateway

    from .rig import RECORDER

    config = parse_config(
        {
            "mcpServers": {"rec": {"command": sys.executable, "args": [RECORDER], "timeout": 90}},
            "sentinel": {"data_dir": str(tmp_path / "data"), "builtins": []},
        },
        source="<test>",
        base_dir=tmp_path,
    )
    async with running_gateway(config) as rt:
        async with Client(rt.front.server) as c:
            with anyio.fail_after(60):  # well below the upstream's 90 s timeout
                result = await c.call_tool("rec__garbage", {})
            assert result.is_error and "invalid message" in result.content[0].text, result.content[0].text
            # the connection is still good for the next call
            assert (await c.call_tool("rec__echo", {"text": "after"})).content[0].text == "after"


def test_stdio_refuses_an_escaped_lone_surrogate_as_http_does(tmp_path: Path) -> None:
    """``"\\ud800"`` is valid JSON text but no Unicode: HTTP's front refuses it at the door (the SDK's parse).
    Over stdio it was let in, and a refusal that quoted the argument then could not be written, which ended
    the gateway's writer for good. Now refused alike, and the gateway answers the next message."""
    proc = _stdio_gateway(tmp_path)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for i, spelt in enumerate((b'"\\ud800"', b'"a\\udfffb"', b'"\\uDBFF"', b'"\\ud800\\u0041"')):
            call = (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"rec__record",'
                    b'"arguments":{"reservation_id":%s}}}' % (i, spelt))
            ping = json.dumps({"jsonrpc": "2.0", "id": f"p{i}", "method": "ping"}).encode()
            proc.stdin.write(call + b"\n" + ping + b"\n")
            proc.stdin.flush()
            frames = [json.loads(proc.stdout.readline()) for _ in range(2)]
            by_id = {f.get("id"): f for f in frames}
            assert by_id[i]["error"]["code"] == -32600, frames
            assert by_id[f"p{i}"]["result"] == {}, frames
        assert proc.poll() is None
    finally:
        kill_tree(proc)


def test_an_answer_with_text_utf8_cannot_carry_is_written_replaced() -> None:
    import mcp_types as types

    from sentinel_mcp.gateway.stdio_transport import _line_of

    answer = types.JSONRPCResponse(jsonrpc="2.0", id=7, result={
        "content": [{"type": "text", "text": "refused: x\ud800y"}], "isError": True})
    line = _line_of(answer)
    assert json.loads(line)["result"]["content"][0]["text"].startswith("refused: x")
    assert line.encode("utf-8", "replace").decode("utf-8")  # what send_line writes


async def test_a_wrong_content_type_accept_or_session_gets_a_json_rpc_error(tmp_path: Path) -> None:
    """The SDK's transports answered these in plain text or with an empty body: each now gets a JSON-RPC
    error (the status kept), with the message's id when it had one."""
    proc, port = start_http(write_config(tmp_path, timeout=60))
    base = f"http://127.0.0.1:{port}"
    ping = b'{"jsonrpc":"2.0","id":7,"method":"ping"}'
    both = "application/json, text/event-stream"
    cases = {
        "text/plain, 2026": {"content-type": "text/plain", "accept": both,
                             "mcp-protocol-version": "2026-07-28"},
        "text/plain, 2025": {"content-type": "text/plain", "accept": both},
        "no content-type, 2026": {"accept": both, "mcp-protocol-version": "2026-07-28"},
        "no accept, 2026": {"content-type": "application/json", "mcp-protocol-version": "2026-07-28"},
        "no accept, 2025": {"content-type": "application/json"},
        "json only, 2026": {"content-type": "application/json", "accept": "application/json",
                            "mcp-protocol-version": "2026-07-28"},
        "xml, 2025": {"content-type": "application/xml", "accept": both},
    }
    try:
        async with httpx2.AsyncClient(timeout=30, headers=AUTH) as http:
            for name, headers in cases.items():
                r = await http.post(f"{base}/mcp", content=ping, headers=headers)
                assert r.status_code >= 400, (name, r.status_code)
                body = r.json()
                assert body["jsonrpc"] == "2.0" and isinstance(body["error"]["code"], int), (name, body)
                assert body["id"] in (7, None), (name, body)
            for query in ("", "?session_id=zz", "?session_id=" + "0" * 32, "?session_id=a&session_id=b"):
                r = await http.post(f"{base}/messages/{query}", content=ping,
                                    headers={"content-type": "application/json"})
                assert r.status_code in (400, 404), (query, r.status_code)
                body = r.json()
                assert body["jsonrpc"] == "2.0" and "message" in body["error"], (query, body)
            # and a well-formed call is still served
            ok = await http.post(f"{base}/mcp", content=json.dumps(INIT), headers={
                "content-type": "application/json", "accept": both})
            assert ok.status_code == 200 and "mcp-session-id" in ok.headers
    finally:
        kill_tree(proc)


async def test_a_long_error_answer_is_cut_and_sent_once() -> None:
    """An error answer is read whole before it is rewritten: one past the bound is cut, and what the app
    still sends of it is dropped (never a second body after a complete one)."""
    from sentinel_mcp.gateway.wire_guard import _json_rpc_errors

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    relay = _json_rpc_errors(send, 5)
    await relay({"type": "http.response.start", "status": 400, "headers": [(b"content-type", b"text/plain")]})
    await relay({"type": "http.response.body", "body": b"x" * 70_000, "more_body": True})
    await relay({"type": "http.response.body", "body": b"y" * 10, "more_body": False})
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    body = json.loads(sent[1]["body"])
    assert body["id"] == 5 and body["error"]["message"] == "x" * 300
    assert dict(sent[0]["headers"])[b"content-length"] == str(len(sent[1]["body"])).encode()
