"""What every door owes a fuzzed message, checked the same way on each: the shape of what it wrote, whether
an answer was due, and that the answer came (before a marker ping's, or by the message's own id after it)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Awaitable, Callable

from sentinel_mcp.app.app_boundary import FAULT

MODERN = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}


def mcp_bases(modern: bool) -> list[dict[str, Any]]:
    """Valid MCP messages of one era, to mutate."""
    def req(method: str, params: dict[str, Any] | None = None, notify: bool = False) -> dict[str, Any]:
        p = dict(params or {})
        if modern and not notify:
            p["_meta"] = dict(ENVELOPE)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": p}
        if not notify:
            msg["id"] = 1
        return msg

    return [
        req("ping"), req("tools/list"), req("tools/list", {"cursor": "abc"}),
        req("tools/call", {"name": "rec__echo", "arguments": {"text": "hello"}}),
        req("tools/call", {"name": "rec__echo", "arguments": {"text": "hi"}, "_meta": {"progressToken": 5}}),
        req("resources/list"), req("resources/read", {"uri": "file:///etc/passwd"}), req("prompts/list"),
        req("prompts/get", {"name": "p", "arguments": {"a": "b"}}), req("resources/templates/list"),
        req("completion/complete", {"ref": {"type": "ref/prompt", "name": "p"},
                                    "argument": {"name": "a", "value": "b"}}),
        req("logging/setLevel", {"level": "debug"}), req("resources/subscribe", {"uri": "x://y"}),
        req("notifications/cancelled", {"requestId": 3, "reason": "r"}, notify=True),
        req("notifications/progress", {"progressToken": 5, "progress": 1, "total": 2}, notify=True),
        req("notifications/roots/list_changed", notify=True),
        req("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "fuzz", "version": "1"}}),
    ]


def a2a_bases() -> list[dict[str, Any]]:
    msg = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    tool = {"messageId": "m-2", "role": "ROLE_USER", "parts": [{"data": {
        "type": "tool_call", "tool_call_id": "c1", "name": "rec__echo", "args": {"text": "x"}}}]}
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t-1"}},
        {"jsonrpc": "2.0", "id": 1, "method": "CancelTask", "params": {"id": "t-1"}},
        {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"pageSize": 5, "pageToken": "x"}},
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": msg}},
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
         "params": {"message": tool, "configuration": {"returnImmediately": True}}},
        {"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}},
    ]


def _strict(raw: bytes) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(name)

    return json.loads(raw.decode("utf-8"), parse_constant=refuse)


def answer_due(raw: bytes, lines: bool = False) -> bool:
    """JSON-RPC 2.0: everything but a notification and a response is answered (a parse error, an invalid
    request, an array, a request with any id). ``lines``: a blank line is no message (stdio)."""
    if lines and not raw.strip(b" \t"):
        return False
    try:
        value = _strict(raw)
    except (ValueError, RecursionError):
        return True
    if not isinstance(value, dict):
        return True
    if "result" in value or "error" in value:
        return "method" in value and "id" in value
    return "id" in value or "method" not in value


UNKNOWN = object()  # a message whose answer's id cannot be told in advance (it comes before the marker's)


def own_id(raw: bytes) -> Any:
    """The id the answer will carry, when told by the message: a valid id, or null sent as null."""
    try:
        value = _strict(raw)
    except (ValueError, RecursionError):
        return UNKNOWN
    if not isinstance(value, dict) or "id" not in value:
        return UNKNOWN
    mid = value["id"]
    if mid is None:
        return None if isinstance(value.get("method"), str) else UNKNOWN
    if isinstance(mid, bool) or not isinstance(mid, (str, int)):
        return UNKNOWN
    return mid if (len(mid) <= 1000 if isinstance(mid, str) else abs(mid) <= 2**53 - 1) else UNKNOWN


def _case_id(mid: Any) -> bool:
    """The ids the mutator gives its cases (unique): an answer with another case's id is not this one's."""
    return isinstance(mid, str) and mid[:1] == "f" and mid[1:].isdigit()


def shape_problem(frame: Any) -> str | None:
    """What is wrong with one frame the gateway wrote (None: a JSON-RPC 2.0 answer or message)."""
    if isinstance(frame, list) and frame:  # a batch's answers
        return next((p for p in map(shape_problem, frame) if p), None)
    if not isinstance(frame, dict) or frame.get("jsonrpc") != "2.0":
        return "not a JSON-RPC 2.0 object"
    if "method" in frame:
        return None if isinstance(frame["method"], str) else "method not a string"
    if ("result" in frame) == ("error" in frame):
        return "neither or both of result and error"
    if "id" not in frame or not (frame["id"] is None or isinstance(frame["id"], (str, int))):
        return f"bad id {frame.get('id')!r:.40}"
    if "error" in frame:
        error = frame["error"]
        if not (isinstance(error, dict) and type(error.get("code")) is int
                and isinstance(error.get("message"), str)):
            return "malformed error"
    return None


def leaks(text: str) -> bool:
    """A traceback, or a fault the HTTP app's boundary caught (one line, no traceback: still a fault)."""
    return "Traceback (most recent call last)" in text or 'File "/' in text or FAULT in text


async def stream_door(cases: list[tuple[str, bytes]], send: Callable[[bytes], Awaitable[list[Any]]],
                      receive: Callable[[], Awaitable[str]], marker: Callable[[str], bytes],
                      wait: float = 30, lines: bool = False) -> list[str]:
    """A door whose answers come on a stream (stdio, SSE, WebSocket): after each case a marker ping; an answer
    due must come before the marker's, or (a forwarded call) by its own id after it. ``send`` returns frames
    answered inline (an HTTP refusal of the POST)."""
    bad: list[str] = []
    for i, (label, raw) in enumerate(cases):
        inline = await send(raw)
        mark = f"mark-{i}"
        await send(marker(mark))
        frames: list[Any] = list(inline)
        mine = own_id(raw)
        seen_mark = False

        def answered() -> bool:
            # an answer to this case: its own id, or null (a message refused before its id was trusted); an
            # earlier case's is not this one's
            return any(isinstance(f, dict) and ("result" in f or "error" in f) and (
                f.get("id") in (mine, None) if mine is not UNKNOWN else not _case_id(f.get("id")))
                for f in frames)

        try:
            while not (seen_mark and (not answer_due(raw, lines) or answered() or mine is UNKNOWN)):
                text = await asyncio.wait_for(receive(), wait)
                if leaks(text):
                    bad.append(f"{label}: traceback text {text[:200]!r}")
                frame = json.loads(text)
                problem = shape_problem(frame)
                if problem:
                    bad.append(f"{label}: {problem}: {text[:200]!r}")
                if isinstance(frame, dict) and frame.get("id") == mark:
                    seen_mark = True
                else:
                    frames.extend(frame if isinstance(frame, list) else [frame])
        except asyncio.TimeoutError:
            bad.append(f"{label}: no answer in {wait} s (marker seen: {seen_mark}; {raw[:120]!r})")
            return bad
        if answer_due(raw, lines) and not answered():
            bad.append(f"{label}: unanswered ({raw[:120]!r})")
    return bad
