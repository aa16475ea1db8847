"""The toolbox over streamable HTTP, except that a ``tools/call`` of one of ``ATTACKS`` gets a hostile answer
(wrong JSON, another id, a batch, too large, a slow drip, a wrong content type, an event stream, requests of
its own on the call's stream...). Everything else (initialize, server/discover, tools/list, the toolbox's own
tools) is the real SDK server. A ``push_*`` attack asks the client something on the call's event stream,
waits for the client's answer (POSTed back) and returns that answer as its result's text.

python hostile_http_upstream.py PORT
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import asyncio
import json
import sys
from typing import Any

import uvicorn

from tests.gateway.odd_notices import odd_notices
from tests.gateway.odd_progress import odd_progress
from tests.gateway.toolbox_server import mcp

BIG = 17 * 1024 * 1024  # above the lean client's 16 MiB answer limit
HUGE = 3 * 1024 * 1024  # an answer above a server's smaller max_result_bytes
RESULT = {"content": [{"type": "text", "text": "hostile ok"}], "isError": False, "resultType": "complete"}


def _json(rid: Any, result: Any = None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result or RESULT}).encode()


def _event(msg: dict) -> bytes:
    return b"event: message\ndata: " + json.dumps(msg).encode() + b"\n\n"


ELICIT = {"message": "hostile asks",
          "requestedSchema": {"type": "object", "properties": {"word": {"type": "string"}}}}
PUSHES = {
    "push_elicit": ("elicitation/create", ELICIT, "h-1"),
    "push_ping": ("ping", None, 7),
    "push_roots": ("roots/list", None, "h-3"),
    "push_unknown": ("hostile/unknown", {}, "h-4"),
    "push_bad_params": ("elicitation/create", {"message": 5}, "h-5"),
}
ANSWERS: dict[Any, asyncio.Future] = {}  # a pushed request's id -> the client's answer
FLOOD, FAIR = 4_000, 400  # progress notices of "sse_flood" and of "sse_flood_fair"
RESUMED: list[str] = []  # the Last-Event-IDs of the resumptions asked for (each refused)
MUTE: set[bytes] = set()  # sessions that called "notices_forever": their pings are never answered


async def push(name: str, rid: Any, send: Any) -> None:
    method, params, sid = PUSHES[name]
    request = {"jsonrpc": "2.0", "id": sid, "method": method, **({"params": params} if params else {})}
    answer = ANSWERS[sid] = asyncio.get_running_loop().create_future()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream")]})
    await send({"type": "http.response.body", "body": _event(request), "more_body": True})
    try:
        got = await asyncio.wait_for(answer, 20)
        got.pop("jsonrpc", None)
        text = json.dumps(got, sort_keys=True)
    except TimeoutError:
        text = "no answer"
    finally:
        ANSWERS.pop(sid, None)
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    await send({"type": "http.response.body", "body": _event({"jsonrpc": "2.0", "id": rid, "result": result}),
                "more_body": False})


async def attack(name: str, rid: Any, send: Any) -> None:
    if name in PUSHES:
        await push(name, rid, send)
        return
    ctype, body, status = "application/json", b"", 200
    if name == "bad_json":
        body = b'{"jsonrpc": "2.0", "id": ' + str(rid).encode() + b', "result": {"content": ['
    elif name == "wrong_id":
        body = _json(rid + 1000 if isinstance(rid, int) else "other")
    elif name == "string_id":
        body = _json(str(rid))
    elif name == "rpc_error":
        error = {"code": -32602, "message": "no such thing"}
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}).encode()
    elif name == "batch":
        body = b"[" + _json(rid) + b"]"
    elif name == "not_a_result":
        body = _json(rid, {"content": "not a list"})
    elif name in TEXTS:  # a result whose texts are, or are not, writable as UTF-8
        text, structured = TEXTS[name]
        result = {**RESULT, "content": [{"type": "text", "text": text}], "structuredContent": structured}
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": result},
                          ensure_ascii=name.endswith("escaped")).encode("utf-8", "surrogatepass")
    elif name == "wrong_type":
        ctype, body = "text/html", b"<html>hello</html>"
    elif name == "status_500":
        status, body = 500, b"oops"
    elif name == "oversize_declared":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(BIG).encode())]})
        await send({"type": "http.response.body", "body": b"{" + b" " * 1000, "more_body": False})
        return
    elif name == "oversize_chunked":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        chunk = b" " * (1024 * 1024)
        for _ in range(BIG // len(chunk) + 1):
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    elif name == "huge_stall":  # HUGE bytes of an answer of many blocks, then a stall before its end
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        head = b'{"jsonrpc": "2.0", "id": ' + json.dumps(rid).encode() + b', "result": {"content": ['
        block = b'{"type": "text", "text": "x"}, '
        start = head + block * (HUGE // len(block))
        await send({"type": "http.response.body", "body": start, "more_body": True})
        await asyncio.sleep(60)  # bounded: far past the test's wait
        await send({"type": "http.response.body", "body": block[:-2] + b"]}}", "more_body": False})
        return
    elif name == "drip":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        for _ in range(60):  # bounded: about 30 s, far past the test's call timeout
            await send({"type": "http.response.body", "body": b" ", "more_body": True})
            await asyncio.sleep(0.5)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    elif name in ("sse_odd_events", "sse_resume_refused"):
        events = [b": a comment, as a keep-alive\n\n", b"id: hostile-1\ndata:\n\n",  # a priming event
                  b"event: ping\ndata: {not json\n\n", b"retry: soon\nid: hostile-2\n\n"]
        if name == "sse_odd_events":
            events.append(b"event: message\r\ndata: " + json.dumps(
                {"jsonrpc": "2.0", "id": rid, "result": RESULT}).encode() + b"\r\n\r\n")
        else:
            events.append(b"retry: 10\n\n")  # then the stream ends; its resumption (a GET) is refused
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        for e in events:
            await send({"type": "http.response.body", "body": e, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    elif name in ("sse_flood", "sse_flood_fair"):  # progress under the call's own token, then the answer
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        count = FLOOD if name == "sse_flood" else FAIR
        batch = b"".join(_event({"jsonrpc": "2.0", "method": "notifications/progress",
                                 "params": {"progressToken": rid, "progress": i}}) for i in range(100))
        for _ in range(count // 100):
            await send({"type": "http.response.body", "body": batch, "more_body": True})
        answer = _event({"jsonrpc": "2.0", "id": rid, "result": RESULT})
        await send({"type": "http.response.body", "body": answer, "more_body": False})
        return
    elif name == "notices_forever":  # progress under the call's own token, 20 a second, never the answer
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        for i in range(20 * 600):  # bounded: 10 minutes, far past the test's
            notice = {"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": rid, "progress": i}}
            await send({"type": "http.response.body", "body": _event(notice), "more_body": True})
            await asyncio.sleep(0.05)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    elif name == "odd_tokens":  # progress under tokens naming no call of the gateway's, then the answer
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        body = b"".join(_event(n) for n in odd_progress(rid)) + _event({"jsonrpc": "2.0", "id": rid,
                                                                         "result": RESULT})
        await send({"type": "http.response.body", "body": body, "more_body": False})
        return
    elif name in ("odd_notices_call", "odd_methods_call"):  # notices reaching no one (odd_notices.py), then
        # the answer ("odd_methods_call": those whose method is no string too)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        notices = odd_notices(sdk=name == "odd_notices_call")
        body = b"".join(_event(n) for n in notices) + _event({"jsonrpc": "2.0", "id": rid, "result": RESULT})
        await send({"type": "http.response.body", "body": body, "more_body": False})
        return
    elif name in ("sse_answer", "sse_no_answer", "sse_oversize"):
        events = [_event({"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": "working"}}),
                  _event({"jsonrpc": "2.0", "method": "notifications/progress",
                          "params": {"progressToken": "x", "progress": 1}})]
        if name == "sse_answer":
            events.append(_event({"jsonrpc": "2.0", "id": rid, "result": RESULT}))
        if name == "sse_oversize":
            events.append(b"data: " + b"x" * (2 * 1024 * 1024) + b"\n\n")
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        for e in events:
            await send({"type": "http.response.body", "body": e, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", ctype.encode()), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body, "more_body": False})


# name -> (text, structured content): lone surrogates escaped (\\ud800) or as encoded bytes (ED A0 80), in a
# text or a key; and clean texts, one starting with byte 0xED (U+D55C) and one escaped
TEXTS = {
    "surrogate_text_escaped": ("a\ud800b", {"k": "v"}),
    "surrogate_text_bytes": ("a\ud800b", {"k": "v"}),
    "surrogate_key_bytes": ("ok", {"\udfff": 1}),
    "surrogate_value_escaped": ("ok", {"k": ["\udc00"]}),
    "clean_text_bytes": ("caf\u00e9 \U0001f600 \ud55c", {"\ud55c": "\u4e2d"}),
    "clean_text_escaped": ("caf\u00e9 \U0001f600", {"k": "\u2028"}),
}
ATTACKS = {*TEXTS, "bad_json", "wrong_id", "string_id", "rpc_error", "batch", "not_a_result", "wrong_type",
           "status_500", "oversize_declared", "oversize_chunked", "drip", "sse_answer", "sse_no_answer",
           "sse_oversize", "sse_odd_events", "sse_resume_refused", "huge_stall", "sse_flood",
           "sse_flood_fair", "odd_tokens", "odd_notices_call", "odd_methods_call", "notices_forever", *PUSHES}


def hostile(inner: Any) -> Any:
    async def app(scope: dict, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and headers.get(b"last-event-id", b"").startswith(b"hostile-"):
            RESUMED.append(headers[b"last-event-id"].decode())
            await send({"type": "http.response.start", "status": 405, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        if scope["type"] != "http" or scope["method"] != "POST":
            await inner(scope, receive, send)
            return
        chunks = []
        while True:
            m = await receive()
            chunks.append(m.get("body", b""))
            if not m.get("more_body"):
                break
        raw = b"".join(chunks)
        try:
            msg = json.loads(raw)
        except ValueError:
            msg = None
        if isinstance(msg, dict) and "method" not in msg and msg.get("id") in ANSWERS:
            ANSWERS[msg["id"]].set_result(msg)  # the client's answer to a pushed request
            await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        if isinstance(msg, dict) and msg.get("method") == "tools/call":
            name = (msg.get("params") or {}).get("name")
            if name in ATTACKS:
                if name == "notices_forever":
                    MUTE.add(headers.get(b"mcp-session-id", b""))
                await attack(name, msg.get("id"), send)
                return
        if isinstance(msg, dict) and msg.get("method") == "ping" and headers.get(b"mcp-session-id") in MUTE:
            await asyncio.sleep(600)  # never answered (bounded: far past the test's wait)
            return
        sent = [False]

        async def replay() -> dict:
            if not sent[0]:
                sent[0] = True
                return {"type": "http.request", "body": raw, "more_body": False}
            return await receive()

        await inner(scope, replay, send)

    return app


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    app = hostile(mcp.streamable_http_app())
    # stopped (SIGTERM) at a test module's end: a stream a hostile answer left open is cut after 2 s, not
    # waited for until the test's stop_process kills it (15 s)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning",
                timeout_graceful_shutdown=2)
