"""The lean upstream calls over stdio (gateway/lean_stdio.py): a ``tools/call`` written to the process's
stdin, its answer taken off its stdout by id, beside the SDK's session on the same pipes. Against real
upstream processes, both eras, each case down the lean path and down the SDK's client
(``SENTINEL_LEAN_UPSTREAM=off``):

- the same calls give the same results, progress, log lines and pushed questions;
- a hostile upstream (tests/gateway/hostile_stdio_upstream.py) gets the same outcome down both paths (an
  error or the same result) for every attack, never a hang, and the next call works (after a reconnect
  when the process died);
- a cancelled call is cancelled upstream.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from sentinel_mcp.config import StdioServer
from sentinel_mcp.gateway.lean_stdio import StdioCaller
from sentinel_mcp.gateway.upstream import Upstream, UpstreamCallError, UpstreamHooks
from tests.gateway.helpers import TOOLBOX
from tests.gateway.test_lean_upstream import ASKING, CALLS, Asker, _plain, _run

pytestmark = pytest.mark.timeout(240)
ROOT = Path(__file__).resolve().parents[2]
ERAS = ["modern", "legacy"]
HOSTILE = [sys.executable, "-m", "tests.gateway.hostile_stdio_upstream"]


async def _nothing(*_: Any) -> None:
    return None


# a lost connection is made again after at most this long (30 s in a gateway): these tests lose it on purpose,
# what they assert is the answers either side of it, not the back-off
RECONNECT_SECONDS = 0.25

async def _with_upstream(cmd: list[str], body: Any, *, protocol: str, lean: bool = True,
                         timeout: float = 60.0, health_interval: float = 3600) -> Any:
    os.environ["SENTINEL_LEAN_UPSTREAM"] = "on" if lean else "off"  # read when the process is spawned
    try:
        target = StdioServer(command=cmd[0], args=cmd[1:], cwd=str(ROOT), protocol=protocol,  # type: ignore[arg-type]
                             timeout=timeout)
        up = Upstream("tb", target, UpstreamHooks(catalog_changed=_nothing), health_interval=health_interval,
                      max_backoff=RECONNECT_SECONDS)
        async with anyio.create_task_group() as tg:
            tg.start_soon(up.run)
            assert await up.wait_ready(30), up.last_error
            assert isinstance(up.lean, StdioCaller) == lean
            try:
                return await body(up)
            finally:
                await up.stop()
    finally:
        os.environ.pop("SENTINEL_LEAN_UPSTREAM", None)


@pytest.mark.parametrize("era", ERAS)
def test_lean_and_sdk_paths_give_the_same_results(era: str) -> None:
    calls = CALLS + (ASKING if era == "legacy" else [])

    async def body(up: Upstream) -> list:
        return await _run(up, calls)

    cmd = [sys.executable, TOOLBOX]
    lean = anyio.run(lambda: _with_upstream(cmd, body, protocol=era))
    sdk = anyio.run(lambda: _with_upstream(cmd, body, protocol=era, lean=False))
    assert lean == sdk
    assert lean[0][0]["content"][0]["text"] == "ok"
    assert lean[6][2] == ["chatty: first line", "chatty: second line"]  # log lines reach their caller
    assert lean[7][1] == ["1.0/4.0/step 1", "2.0/4.0/step 2", "3.0/4.0/step 3", "4.0/4.0/step 4"]
    if era == "legacy":
        assert lean[8][0]["content"][0]["text"] == "i1=answered"
        assert lean[9][0]["content"][0]["text"] == "ship:accept:True"


ATTACKS = ["bad_json", "wrong_id", "batch", "not_a_result", "rpc_error", "error_not_object",
           "progress_then_answer", "die"]


# an attack whose call can only end at its time limit (no answer under its id ever comes) waits this long, not
# the others' 3 s: what is asserted is that it ends there, with that reason
WAITED_OUT = {"wrong_id": 1.0}


async def _attacks(up: Upstream, names: list[str], timeout: float = 3.0) -> list:
    out = []
    for tool in names:
        link = Asker("hostile")
        seen: list[Any] = []

        async def progress(p: float, total: float | None, message: str | None) -> None:
            seen.append(p)

        with anyio.fail_after(60):  # never a hang
            try:
                r = _plain(await up.call_tool(tool, {}, link=link, progress=progress,
                                              timeout=WAITED_OUT.get(tool, timeout)))
                out.append(("result", r, seen, link.logged))
            except UpstreamCallError as e:
                out.append(("error", str(e), seen, link.logged))
        for attempt in range(60):  # a process that died is spawned again (polled, bounded by count)
            await up.wait_ready(30)
            try:
                assert _plain(await up.call_tool("noop", {}))["content"][0]["text"] == "ok"
                break
            except UpstreamCallError as e:
                if attempt == 59 or "went away" not in str(e) and "not connected" not in str(e):
                    raise
                await anyio.sleep(0.05)
    return out


@pytest.mark.parametrize("era", ERAS)
def test_a_hostile_upstream_gets_the_same_outcomes_down_both_paths(era: str) -> None:
    lean = anyio.run(lambda: _with_upstream(HOSTILE, lambda up: _attacks(up, ATTACKS), protocol=era))
    sdk = anyio.run(lambda: _with_upstream(HOSTILE, lambda up: _attacks(up, ATTACKS), protocol=era,
                                           lean=False))
    outcomes = {name: o[0] for name, o in zip(ATTACKS, lean)}
    assert outcomes == {name: o[0] for name, o in zip(ATTACKS, sdk)}
    assert outcomes == {name: "result" if name == "progress_then_answer" else "error" for name in ATTACKS}
    said = {name: o[1] for name, o in zip(ATTACKS, lean)}
    assert "invalid message" in said["bad_json"] and "invalid message" in said["batch"]
    assert "did not answer within 1s" in said["wrong_id"]  # WAITED_OUT
    assert "not a valid tools/call result" in said["not_a_result"]
    assert "error -32602: no such thing" in said["rpc_error"]
    assert "went away" in said["die"]
    # progress under another token (or a bool one) is not this call's; the log line is
    assert lean[ATTACKS.index("progress_then_answer")][2:] == ([], ["working"])
    assert sdk[ATTACKS.index("progress_then_answer")][2:] == ([], ["working"])


ENCODING_ATTACKS = ["surrogate_text", "surrogate_value", "surrogate_key", "surrogate_text_bytes",
                    "surrogate_value_bytes", "bad_utf8"]


@pytest.mark.parametrize("era", ERAS)
def test_answers_utf8_cannot_carry_get_the_same_outcome_down_both_paths(era: str) -> None:
    """A lone surrogate escaped in a text, value or key (``\\ud800``): refused down both paths (the SDK's
    reader takes none; the lean path read the line with ``json.loads``, which does, and passed it on). Bytes
    that are not UTF-8 (an encoded surrogate, 0xFF): read as U+FFFD down both paths (the SDK's reader ended on
    them and left every later call waiting out its time limit). The next call works after each."""
    names = ENCODING_ATTACKS
    lean = anyio.run(lambda: _with_upstream(HOSTILE, lambda up: _attacks(up, names), protocol=era))
    sdk = anyio.run(lambda: _with_upstream(HOSTILE, lambda up: _attacks(up, names), protocol=era, lean=False))
    kinds = {n: o[0] for n, o in zip(names, lean)}
    assert kinds == {n: o[0] for n, o in zip(names, sdk)}, (lean, sdk)
    assert kinds == {n: "result" if n.endswith(("_bytes", "_utf8")) else "error" for n in names}, lean
    for name, got, sdk_got in zip(names, lean, sdk):
        if got[0] == "result":
            assert got[1] == sdk_got[1], name
            assert "\ufffd" in json.dumps(got[1], ensure_ascii=False), got[1]
            json.dumps(got[1], ensure_ascii=False).encode("utf-8")  # writable: no lone surrogate left


def test_a_line_that_never_ends_ends_the_connection_not_the_memory() -> None:
    """An upstream writing megabytes with no newline: the SDK's reader would keep all of it; past
    MAX_LINE_BYTES the lean tap ends the connection, the call fails at once with the reason (not at its time
    limit), and the upstream is spawned again for the next call."""
    from sentinel_mcp.gateway.lean_stdio import MAX_LINE_BYTES

    async def body(up: Upstream) -> str:
        with anyio.fail_after(120):
            with pytest.raises(UpstreamCallError) as e:
                await up.call_tool("endless_line", {}, timeout=100.0)
        for _ in range(600):  # the process is spawned again (bounded by count, up to a minute)
            if up.reconnects and up.state == "ready":
                break
            await anyio.sleep(0.1)
        assert _plain(await up.call_tool("noop", {}))["content"][0]["text"] == "ok"
        return str(e.value)

    said = anyio.run(lambda: _with_upstream(HOSTILE, body, protocol="modern"))
    assert f"more than {MAX_LINE_BYTES} bytes" in said


def test_an_answer_with_the_id_spelled_as_a_string_is_not_taken() -> None:
    """The SDK's client takes "5" for 5 on its own requests; the lean path holds ids to their type (the line
    goes on to the SDK's session, which knows no such request), so the call ends at its time limit."""
    async def body(up: Upstream) -> str:
        with pytest.raises(UpstreamCallError) as e:
            await up.call_tool("string_id", {}, timeout=1.0)
        return str(e.value)

    said = anyio.run(lambda: _with_upstream(HOSTILE, body, protocol="legacy"))
    assert "did not answer within 1s" in said


def test_a_request_the_upstream_pushes_mid_call_gets_the_same_answer_down_both_paths() -> None:
    async def body(up: Upstream) -> Any:
        r = _plain(await up.call_tool("push_elicit", {}, link=Asker("pushed")))
        return json.loads(r["content"][0]["text"])

    lean = anyio.run(lambda: _with_upstream(HOSTILE, body, protocol="legacy"))
    sdk = anyio.run(lambda: _with_upstream(HOSTILE, body, protocol="legacy", lean=False))
    assert lean == sdk
    assert lean["id"] == "h-1" and lean["result"]["content"]["word"] == "pushed"


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("lean", [True, False])
def test_a_cancelled_call_is_cancelled_upstream(tmp_path: Path, era: str, lean: bool) -> None:
    marker = tmp_path / "marker"

    async def body(up: Upstream) -> None:
        with anyio.move_on_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: up.call_tool("hang_marked", {"path": str(marker)}))
                while "started" not in (marker.read_text() if marker.exists() else ""):
                    await anyio.sleep(0.05)
                tg.cancel_scope.cancel()
        with anyio.fail_after(20):
            while "cancelled" not in marker.read_text():
                await anyio.sleep(0.05)
        assert _plain(await up.call_tool("noop", {}))["content"][0]["text"] == "ok"

    anyio.run(lambda: _with_upstream([sys.executable, TOOLBOX], body, protocol=era, lean=lean))
    assert marker.read_text().split() == ["started", "cancelled"]


def _numbered(i: int) -> bytes:
    return (f'{{"n": {i}, "pad": "' + "x" * (i * 997 % 70_000) + '"}\n').encode()  # lines up to 70 kB


def test_lean_lines_reach_the_process_whole_and_a_closed_stdin_is_an_error_not_a_hang() -> None:
    """``_SharedStdin.send_line`` writes to the asyncio writer under anyio's wrapper (no checkpoint per line):
    lines sent at once by many calls and by the SDK's own writer arrive whole and in order of sending, and a
    process that closed its stdin fails the send with an error the lean caller maps to "Connection closed"."""
    from sentinel_mcp.gateway.lean_stdio import _SharedStdin

    async def body() -> tuple[list[bytes], BaseException | None]:
        echo = [sys.executable, "-c",
                "import sys\nfor line in sys.stdin.buffer: sys.stdout.buffer.write(line)"]
        async with await anyio.open_process(echo) as proc:
            assert proc.stdin is not None and proc.stdout is not None
            shared = _SharedStdin(proc.stdin)
            assert shared._writer is not None  # the direct way is taken
            lines = [_numbered(i) for i in range(60)]
            got = b""

            async def read() -> None:  # read as it comes (a full pipe would hold the echo, then the sends)
                nonlocal got
                async for chunk in proc.stdout:  # type: ignore[union-attr]
                    got += chunk

            with anyio.fail_after(60):
                async with anyio.create_task_group() as reading:
                    reading.start_soon(read)
                    async with anyio.create_task_group() as tg:
                        for i, line in enumerate(lines):  # the SDK's writer and lean calls, all at once
                            tg.start_soon(shared.send if i % 3 == 0 else shared.send_line, line)
                    await proc.stdin.aclose()
        closed = [sys.executable, "-c", "import os, time\nos.close(0)\ntime.sleep(30)"]
        error: BaseException | None = None
        async with await anyio.open_process(closed) as proc:
            assert proc.stdin is not None
            shared = _SharedStdin(proc.stdin)
            await anyio.sleep(0.5)  # it has closed its end
            try:
                with anyio.fail_after(10):
                    for _ in range(50):  # the first writes may still be buffered; the pipe's end is seen soon
                        await shared.send_line(b'{"x": 1}\n' * 1000)
            except (anyio.BrokenResourceError, OSError) as e:
                error = e
            proc.kill()
        return got.splitlines(keepends=True), error

    got, error = anyio.run(body)
    assert sorted(got) == sorted(_numbered(i) for i in range(60))
    assert all(line.endswith(b'"}\n') and line.startswith(b'{"n": ') for line in got)  # none interleaved
    assert error is not None
