"""A lean call's answer on a handshake-era stdio connection comes after every line the SDK was handed before
it (its log lines, its questions), and goes out at once when nothing is waiting (``stdio_transport``'s
``ordered``: the write stream counts what it handed to the writer). Real pipes, the real transport."""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from sentinel_mcp.gateway.stdio_transport import stdio_transport


class Binding:
    """What ``stdio_transport`` hands the lean calls; it takes no line itself."""

    ordered: Any = None

    def bind(self, send_line: Any, line_of: Any, ordered: Any = None, answered: Any = None) -> None:
        self.ordered = ordered

    def take(self, message: Any) -> bool:
        return False

    def seen(self, message: Any) -> None:
        return None

    async def close(self) -> None:
        return None


def _note(text: str) -> SessionMessage:
    return SessionMessage(types.JSONRPCNotification(
        jsonrpc="2.0", method="notifications/message", params={"level": "info", "data": text}))


def test_an_answer_waits_behind_what_was_handed_and_goes_at_once_when_nothing_was() -> None:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    lean = Binding()
    handed: list[int] = []

    async def main() -> None:
        async with stdio_transport(in_r, out_w, lean=lean) as (_read, write):  # type: ignore[arg-type]
            await lean.ordered('{"answer": 1}')  # idle: written at once, not handed through the stream
            handed.append(write.handed)
            clone = write.clone()  # a clone of the SDK's stream hands lines to the same writer: counted too
            for round_ in range(20):
                via = write if round_ % 2 else clone
                await via.send(_note(f"log {round_}"))  # handed to the writer, not yet written by it
                await lean.ordered(json.dumps({"answer": f"after log {round_}"}))  # so: behind it
            await anyio.sleep(0.2)  # the writer writes what it was handed
            handed.append(write.handed)
            await lean.ordered('{"answer": "last"}')  # idle again: at once
            handed.append(write.handed)
        os.close(in_w)

    try:
        anyio.run(main)
        os.close(out_w)
        data = b""
        while chunk := os.read(out_r, 65536):
            data += chunk
    finally:
        for fd in (in_r, out_r):
            os.close(fd)
    lines = [json.loads(line) for line in data.decode().splitlines()]
    assert lines[0] == {"answer": 1} and handed[0] == 0
    expected: list[Any] = []
    for round_ in range(20):
        expected += [("log", f"log {round_}"), ("answer", f"after log {round_}")]
    got = [("log", m["params"]["data"]) if "method" in m else ("answer", m["answer"]) for m in lines[1:-1]]
    assert got == expected  # every answer behind the line handed before it
    assert handed[1] == handed[2]  # the last answer, nothing waiting, was not handed through the stream
    assert lines[-1] == {"answer": "last"}
