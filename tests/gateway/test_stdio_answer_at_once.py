"""A lean call's answer from an stdio upstream, taken as the pipe gives it (``_TappedStdout.at_once``) only
when nothing can come before it: alone in its read, at a line's start, with nothing unread in front of it.
Anything else (bytes the SDK has not read yet, two lines in one read, a log line of the call) keeps its order
through ``receive``. A real asyncio reader under anyio's wrapper, as the upstream's process has."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from anyio._backends._asyncio import StreamReaderWrapper

from sentinel_mcp.gateway.lean_stdio import StdioTap, _TappedStdout, _Waiting


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


ANSWER = _line({"jsonrpc": "2.0", "id": 7, "result": {"content": [], "resultType": "complete"}})
SDK_LINE = _line({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
LOG_LINE = _line({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": "working"}})


def _tapped() -> tuple[asyncio.StreamReader, _TappedStdout, StdioTap]:
    reader = asyncio.StreamReader()
    tap = StdioTap()
    return reader, _TappedStdout(StreamReaderWrapper(reader), tap), tap


def _wait(tap: StdioTap, rid: int, on_log: Any = None) -> asyncio.Future[dict[str, Any]]:
    async def nothing(*_: Any) -> None:
        return None

    answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
    tap.waiting[rid] = _Waiting(answer, nothing, on_log or nothing)
    return answer


async def _reading(out: _TappedStdout) -> asyncio.Future[bytes]:
    """The SDK's reader task asleep at its read, as it is between the upstream's writes."""
    task = asyncio.ensure_future(out.receive())
    for _ in range(3):
        await asyncio.sleep(0)
    assert not task.done()
    return task


def test_a_lone_answer_is_taken_as_it_is_read() -> None:
    async def main() -> None:
        reader, out, tap = _tapped()
        reading = await _reading(out)
        answer = _wait(tap, 7)
        reader.feed_data(ANSWER)
        assert answer.done() and answer.result()["id"] == 7  # before any task ran
        assert not reader._buffer  # type: ignore[attr-defined]  # the SDK's reader is given nothing of it
        reader.feed_data(SDK_LINE)
        assert await reading == SDK_LINE

    asyncio.run(main())


def test_an_answer_waits_while_the_sdks_reader_still_hands_on_what_it_read_before() -> None:
    """The SDK's reader has taken a notice the upstream wrote before the answer and is still handing it on
    (not at its read): the answer arriving alone is not taken at once, so it cannot overtake that notice
    (a loaded CI run counted an unsubscribed update after the call it came before had its answer)."""
    async def main() -> None:
        reader, out, tap = _tapped()
        reader.feed_data(SDK_LINE)
        assert await out.receive() == SDK_LINE  # read, now on its way to its handler: no read is waiting
        answer = _wait(tap, 7)
        reader.feed_data(ANSWER)
        assert not answer.done()
        reader.feed_data(SDK_LINE)
        assert await out.receive() == SDK_LINE  # the reader back at its read: the answer in its order
        assert answer.done() and answer.result()["id"] == 7

    asyncio.run(main())


def test_bytes_unread_before_an_answer_keep_their_place() -> None:
    async def main() -> None:
        reader, out, tap = _tapped()
        reader.feed_data(SDK_LINE)  # not read yet by the SDK's reader
        answer = _wait(tap, 7)
        reader.feed_data(ANSWER)
        assert not answer.done()  # behind what is unread: taken in order, by ``receive``
        assert await out.receive() == SDK_LINE
        assert answer.done() and answer.result()["id"] == 7

    asyncio.run(main())


def test_two_lines_in_one_read_and_a_split_answer_go_the_way_of_receive() -> None:
    async def main() -> None:
        reader, out, tap = _tapped()
        answer = _wait(tap, 7)
        reader.feed_data(ANSWER + SDK_LINE)
        assert not answer.done()
        assert await out.receive() == SDK_LINE
        assert answer.done()

        answer = _wait(tap, 8)
        split = ANSWER.replace(b'"id": 7', b'"id": 8')
        reader.feed_data(split[:10])
        assert await _nothing_passed(out)
        reader.feed_data(split[10:])  # the rest of a line begun: never taken alone
        assert not answer.done()
        reader.feed_data(SDK_LINE)
        assert await out.receive() == SDK_LINE
        assert answer.done() and answer.result()["id"] == 8

    asyncio.run(main())


async def _nothing_passed(out: _TappedStdout) -> bool:
    """``receive`` holds what it read (a part of a line while a call waits) and passes nothing on."""
    task = asyncio.ensure_future(out.receive())
    for _ in range(5):
        await asyncio.sleep(0)
    held = not task.done() and bool(out.pending)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    return held


def test_a_log_line_of_a_waiting_call_reaches_it_before_its_answer() -> None:
    async def main() -> None:
        reader, out, tap = _tapped()
        seen: list[bool] = []

        async def on_log(params: Any) -> None:
            seen.append(answer.done())

        answer = _wait(tap, 7, on_log)
        reader.feed_data(LOG_LINE)
        assert not seen  # its callback is awaited: never at once
        reader.feed_data(ANSWER)
        reader.feed_data(SDK_LINE)
        assert not answer.done()
        assert await out.receive() == SDK_LINE
        assert seen == [False] and answer.done()

    asyncio.run(main())
