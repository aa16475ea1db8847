"""The toolbox over stdio, except that a ``tools/call`` of one of ``ATTACKS`` gets a hostile answer: a line
that is not JSON, an answer to another id or with a string id, a batch, a result or an error of the wrong
shape, progress under another token, log lines, a request of its own mid-call (whose answer it returns as
its result's text), a flood of such requests, of log lines, of progress or of resource updates at once, the
process dying mid-call, or a line that never ends. Everything else is the real SDK server (both eras).

python hostile_stdio_upstream.py
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import json
import os
import sys
from typing import Any

import anyio

from tests.gateway.odd_notices import odd_notices
from tests.gateway.odd_progress import odd_progress
from tests.gateway.toolbox_server import RO, mcp


def _not_reached() -> str:
    """Listed, so a gateway in front routes to it; its calls are answered by ``attack``."""
    return "not reached"


for _name in ("push_flood", "progress_flood", "notices_forever", "odd_tokens", "odd_notices_call",
              "odd_methods_call", "busy_writer", "huge_answer"):
    mcp.tool(name=_name, annotations=RO)(_not_reached)


RESULT = {"content": [{"type": "text", "text": "hostile ok"}], "isError": False, "resultType": "complete"}
ELICIT = {"message": "hostile asks",
          "requestedSchema": {"type": "object", "properties": {"word": {"type": "string"}}}}


class Wire:
    """The real stdout, one line at a time, for the SDK server and the attacks alike."""

    def __init__(self) -> None:
        self.out = anyio.wrap_file(sys.stdout)
        self.lock = anyio.Lock()
        self.answers: dict[Any, Any] = {}  # a pushed request's id -> a memory stream for its answer
        self.mute = False  # pings are never answered (``notices_forever``)

    async def write(self, text: str) -> None:
        async with self.lock:
            await self.out.write(text)
            await self.out.flush()

    async def flush(self) -> None:
        return None

    async def raw(self, data: bytes) -> None:
        """Bytes as they are (an encoded lone surrogate, which the text layer refuses to write)."""
        async with self.lock:
            await self.out.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()

    async def line(self, msg: Any) -> None:
        await self.write((msg if isinstance(msg, str) else json.dumps(msg)) + "\n")


async def attack(wire: Wire, name: str, rid: Any, token: Any = None) -> None:
    def answer(result: Any = None, **over: Any) -> dict:
        return {"jsonrpc": "2.0", "id": rid, "result": result or RESULT, **over}

    if name == "bad_json":
        await wire.line('{"jsonrpc": "2.0", "id": %s, "result": {"content": [' % json.dumps(rid))
    elif name == "wrong_id":
        await wire.line(answer(id=rid + 1000 if isinstance(rid, int) else "other"))
    elif name == "string_id":
        await wire.line(answer(id=str(rid)))
    elif name == "batch":
        await wire.line([answer()])
    elif name == "not_a_result":
        await wire.line(answer({"content": "not a list"}))
    elif name == "rpc_error":
        await wire.line({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "no such thing"}})
    elif name == "error_not_object":
        await wire.line({"jsonrpc": "2.0", "id": rid, "error": "broken"})
    elif name == "progress_then_answer":
        await wire.line({"jsonrpc": "2.0", "method": "notifications/progress",
                         "params": {"progressToken": "someone-else", "progress": 9}})
        await wire.line({"jsonrpc": "2.0", "method": "notifications/progress",
                         "params": {"progressToken": True, "progress": 8}})
        await wire.line({"jsonrpc": "2.0", "method": "notifications/message",
                         "params": {"level": "info", "data": "working"}})
        await wire.line(answer())
    elif name == "push_elicit":
        send, receive = anyio.create_memory_object_stream[Any](1)
        wire.answers["h-1"] = send
        await wire.line({"jsonrpc": "2.0", "id": "h-1", "method": "elicitation/create", "params": ELICIT})
        with anyio.move_on_after(20):
            got = await receive.receive()
            got.pop("jsonrpc", None)
            await wire.line(answer({"content": [{"type": "text", "text": json.dumps(got, sort_keys=True)}]}))
    elif name == "push_flood":  # FLOOD elicitations at once; the result counts how each was answered
        got: dict[str, int] = {}

        async def one(i: int) -> None:
            send, receive = anyio.create_memory_object_stream[Any](1)
            wire.answers[f"f-{i}"] = send
            push = {"jsonrpc": "2.0", "id": f"f-{i}", "method": "elicitation/create", "params": ELICIT}
            await wire.line(push)
            reply = await receive.receive()
            kind = "error" if "error" in reply else str(reply.get("result", {}).get("action"))
            got[kind] = got.get(kind, 0) + 1

        with anyio.move_on_after(60):
            async with anyio.create_task_group() as flood:
                for i in range(FLOOD):
                    flood.start_soon(one, i)
        text = json.dumps(got, sort_keys=True)
        counted = {"content": [{"type": "text", "text": text}], "structuredContent": {"result": text}}
        await wire.line(answer(counted))
    elif name == "busy_writer":  # BUSY pushes, one each BUSY_GAP seconds, its stdout held meanwhile: a ping's
        # answer queues behind them (as behind a flood's backlog on a loaded machine), the pipe never silent
        got = {}

        async def asked(i: int) -> None:
            send, receive = anyio.create_memory_object_stream[Any](1)
            wire.answers[f"b-{i}"] = send
            reply = await receive.receive()
            kind = "error" if "error" in reply else str(reply.get("result", {}).get("action"))
            got[kind] = got.get(kind, 0) + 1

        async with anyio.create_task_group() as waiting:
            async with wire.lock:
                for i in range(BUSY):
                    waiting.start_soon(asked, i)
                    push = {"jsonrpc": "2.0", "id": f"b-{i}", "method": "elicitation/create",
                            "params": ELICIT}
                    await wire.out.write(json.dumps(push) + "\n")
                    await wire.out.flush()
                    await anyio.sleep(BUSY_GAP)
        text = json.dumps(got, sort_keys=True)
        await wire.line(answer({"content": [{"type": "text", "text": text}],
                                "structuredContent": {"result": text}}))
    elif name == "log_flood":  # FLOOD log lines at once, then the answer
        for i in range(FLOOD):
            await wire.line({"jsonrpc": "2.0", "method": "notifications/message",
                             "params": {"level": "info", "data": f"line {i}"}})
        await wire.line(answer())
    elif name == "progress_flood":  # FLOOD progress reports of this call (its token) at once, then the answer
        for i in range(1, FLOOD + 1):
            await wire.line({"jsonrpc": "2.0", "method": "notifications/progress",
                             "params": {"progressToken": token, "progress": i, "total": FLOOD}})
        await wire.line(answer({**RESULT, "structuredContent": {"result": "hostile ok"}}))  # as listed
    elif name == "notices_forever":  # its call's progress, 20 a second, never the answer (nor a ping's)
        wire.mute = True
        for i in range(20 * 600):  # bounded: 10 minutes, far past the test's
            await wire.line({"jsonrpc": "2.0", "method": "notifications/progress",
                             "params": {"progressToken": token, "progress": i}})
            await anyio.sleep(0.05)
    elif name == "odd_tokens":  # progress under tokens naming no call of the gateway's (odd_progress.py)
        for notice in odd_progress(rid):
            await wire.line(notice)
        await wire.line(answer())
    elif name in ("odd_notices_call", "odd_methods_call"):  # notices that reach no one (odd_notices.py), then
        # the answer ("odd_methods_call": those no SDK transport reads as a message too)
        for notice in odd_notices(sdk=name == "odd_notices_call"):
            await wire.line(notice)
        await wire.line(answer())
    elif name == "updated_flood":  # FLOOD "updated" of one resource at once, then the answer
        for _ in range(FLOOD):
            await wire.line({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                             "params": {"uri": FLOOD_URI}})
        await wire.line(answer())
    elif name == "stray_updates":  # FLOOD "updated" of made-up resources nobody subscribed to, then answer
        for i in range(FLOOD):
            await wire.line({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                             "params": {"uri": f"hostile://made-up/{i}"}})
        await wire.line(answer())
    elif name == "near_updates":  # "updated" for spellings near the subscribed "hostile://real"
        for uri in NEAR_URIS:
            await wire.line({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                             "params": {"uri": uri}})
        await wire.line(answer())
    elif name in SURROGATES:  # a lone surrogate, escaped or as its encoded bytes (json.loads takes both)
        text, where = SURROGATES[name]
        result = ({**RESULT, "content": [{"type": "text", "text": text}]} if where == "text"
                  else {**RESULT, "structuredContent": {text: 1} if where == "key" else {"v": text}})
        if name.endswith("_bytes"):
            line = json.dumps(answer(result), ensure_ascii=False).encode("utf-8", "surrogatepass")
            await wire.raw(line + b"\n")
        else:
            await wire.line(answer(result))
    elif name == "bad_utf8":  # an answer whose text is bytes UTF-8 never spells (0xFF)
        line = json.dumps(answer({**RESULT, "content": [{"type": "text", "text": "@"}]})).encode()
        await wire.raw(line.replace(b"@", b"\xff") + b"\n")
    elif name == "die":
        os._exit(3)
    elif name == "huge_answer":  # HUGE bytes of an answer of many blocks, then a long pause before its end
        head = '{"jsonrpc": "2.0", "id": %s, "result": {"content": [' % json.dumps(rid)
        block = '{"type": "text", "text": "x"}, '
        await wire.write(head + block * (HUGE // len(block)))
        await anyio.sleep(3600)
        await wire.line(block[:-2] + "]}}")
    elif name == "endless_line":  # 17 MiB, no newline (one write: nothing comes between), then silence
        await wire.write("x" * (17 * 1024 * 1024))
        await anyio.sleep(3600)


# answers whose text, structured value or key holds a lone surrogate: the SDK's client refuses them (its
# JSON reader takes no lone surrogate); so must a lean path that reads the line with ``json.loads``
SURROGATES = {"surrogate_text": ("a\ud800b", "text"), "surrogate_value": ("\udfff", "value"),
              "surrogate_key": ("k\udc80", "key"), "surrogate_text_bytes": ("a\ud800b", "text"),
              "surrogate_value_bytes": ("x\udbff", "value")}
ATTACKS = set(SURROGATES) | {
    "bad_utf8", "bad_json", "wrong_id", "string_id", "batch", "not_a_result", "rpc_error", "error_not_object",
           "progress_then_answer", "odd_tokens", "odd_notices_call", "odd_methods_call", "notices_forever",
           "push_elicit", "push_flood", "log_flood", "progress_flood", "updated_flood", "stray_updates",
           "near_updates", "die", "endless_line", "huge_answer", "busy_writer"}
HUGE = 3 * 1024 * 1024
FLOOD = 2000
BUSY, BUSY_GAP = 100, 0.15  # busy_writer: 15 s of pushes, never more than 0.15 s apart
FLOOD_URI = "hostile://flooded"
# near spellings of a subscribed URI (case, a trailing slash, percent-encoding, spaces, an invisible
# character, another scheme) and values that are no URI at all
NEAR_URIS = ["hostile://REAL", "hostile://real/", "hostile://re%61l", " hostile://real", "hostile://real\u200b",
             "HOSTILE://real", "file://real", 5, None, ["hostile://real"], {"uri": "hostile://real"}]


class Lines:
    """The real stdin's lines for the SDK server, without the attacked calls and the answers to pushes."""

    def __init__(self, wire: Wire, tg: Any) -> None:
        self.wire, self.tg = wire, tg
        self.stdin = anyio.wrap_file(sys.stdin)

    def __aiter__(self) -> "Lines":
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self.stdin.readline()
            if not line:
                raise StopAsyncIteration
            try:
                msg = json.loads(line)
            except ValueError:
                return line
            if not isinstance(msg, dict):
                return line
            if msg.get("method") == "ping" and self.wire.mute:
                continue  # never answered, once "notices_forever" was called
            if "method" not in msg and msg.get("id") in self.wire.answers:
                await self.wire.answers.pop(msg["id"]).send(msg)
                continue
            if msg.get("method") in ("resources/subscribe", "resources/unsubscribe"):
                await self.wire.line({"jsonrpc": "2.0", "id": msg.get("id"), "result": {}})
                if msg["method"] == "resources/subscribe":  # changed at once: right behind the answer
                    await self.wire.line({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                                          "params": {"uri": (msg.get("params") or {}).get("uri")}})
                continue
            name = (msg.get("params") or {}).get("name") if msg.get("method") == "tools/call" else None
            if name in ATTACKS:
                meta = (msg.get("params") or {}).get("_meta") or {}
                self.tg.start_soon(attack, self.wire, name, msg.get("id"), meta.get("progressToken"))
                continue
            return line


async def main() -> None:
    from mcp.server.stdio import stdio_server

    wire = Wire()
    server = mcp._lowlevel_server
    async with anyio.create_task_group() as tg:
        async with stdio_server(stdin=Lines(wire, tg), stdout=wire) as (read, write):  # type: ignore[arg-type]
            await server.run(read, write, server.create_initialization_options())
        tg.cancel_scope.cancel()


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    anyio.run(main)
