"""An upstream sends, during a call, notices that reach no one: known methods with params of the wrong shape,
methods no era defines (near spellings, a 100 KB name), a method that is no string (odd_notices.py). Each
must be charged to the upstream's notice budget (a flood of them is paced like any other: notice_budget.py)
and said in Sentinel's log at a cadence: a bounded number of lines for the flood, no traceback; the call's
answer still comes, and the next call's. Real upstream processes (hostile_stdio_upstream.py,
hostile_http_upstream.py, sse_storm_upstream.py: attack ``odd_notices_call``), down the lean path and the
SDK's, over stdio, streamable HTTP and the legacy SSE transport, in both eras.

Before, the SDK's session logged a warning with its traceback (a malformed one) or a debug line (an unknown
method) for each, uncharged; the lean HTTP path an info line each, uncharged."""

from __future__ import annotations

import logging
import sys
from typing import Any

import anyio
import pytest

from sentinel_mcp.gateway import notice_budget
from sentinel_mcp.gateway.upstream import Upstream
from tests.gateway import test_lean_stdio, test_lean_upstream
from tests.gateway.odd_notices import sent
from tests.gateway.test_lean_upstream import hostile as hostile  # the module's upstream (a fixture)

from ..conftest import free_port, stop_process

pytestmark = pytest.mark.timeout(240)
PATHS = pytest.mark.parametrize("lean", [True, False], ids=["lean", "sdk"])
ERAS = pytest.mark.parametrize("era", ["modern", "legacy"])
STDIO = [sys.executable, "-m", "tests.gateway.hostile_stdio_upstream"]
LINES = 30  # far below one a notice (``sent()``: 320): a few a kind, at a cadence


def _odd_call(n: int, tool: str = "odd_notices_call") -> Any:
    async def body(up: Upstream) -> tuple[Any, Any, int]:
        charged = up.notice_budget.charged
        result = await up.call_tool(tool, {})
        with anyio.move_on_after(30):  # a bound, no timing asserted: notices may still be being read
            while up.notice_budget.charged - charged < n:
                await anyio.sleep(0.05)
        await anyio.sleep(0.2)  # none more is charged (a notice charged twice would show here)
        charged = up.notice_budget.charged - charged
        after = await up.call_tool("echo", {"text": "after"})
        return result, after, charged
    return body


def _check(got: tuple[Any, Any, int], n: int, caplog: pytest.LogCaptureFixture) -> None:
    result, after, charged = got
    assert not result.is_error and result.content[0].text == "hostile ok", result
    assert not after.is_error and after.content[0].text == "after", after
    assert charged == n, (charged, n)
    # Sentinel's and the SDK's lines an operator sees, and the debug line a notice the SDK's client session
    # (its logger: "client") drops
    ours = [r for r in caplog.records if r.name.split(".")[0] in ("mcp", "sentinel_mcp", "client")
            and (r.levelno >= logging.INFO or r.name == "client")]
    assert len(ours) <= LINES, [r.getMessage()[:120] for r in ours[:40]]
    assert not [r for r in ours if r.exc_info], [r.getMessage()[:120] for r in ours if r.exc_info][:5]
    assert all(len(r.getMessage()) < 2_000 for r in ours)  # never the 100 KB name


@pytest.fixture
def caught(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> pytest.LogCaptureFixture:
    monkeypatch.setattr(notice_budget, "BURST", 100_000)  # charged, never paused: the count is the point
    caplog.set_level(logging.DEBUG)
    return caplog


async def _logged_from_now(caplog: pytest.LogCaptureFixture, body: Any) -> Any:
    async def run(up: Upstream) -> Any:
        caplog.clear()  # the connection's own lines before the call are not the flood's
        return await body(up)
    return run


@PATHS
@ERAS
def test_odd_notices_over_stdio_are_charged_and_said_at_a_cadence(
        lean: bool, era: str, caught: pytest.LogCaptureFixture) -> None:
    async def main() -> Any:
        body = await _logged_from_now(caught, _odd_call(sent()))
        return await test_lean_stdio._with_upstream(STDIO, body, protocol=era, lean=lean)
    _check(anyio.run(main), sent(), caught)


@PATHS
@ERAS
async def test_odd_notices_over_streamable_http_are_charged_and_said_at_a_cadence(
        hostile: str, lean: bool, era: str, caught: pytest.LogCaptureFixture) -> None:
    body = await _logged_from_now(caught, _odd_call(sent()))
    got = await test_lean_upstream._with_upstream(hostile, body, protocol=era, lean=lean)
    _check(got, sent(), caught)


async def test_odd_notices_over_sse_are_charged_and_said_at_a_cadence(
        caught: pytest.LogCaptureFixture) -> None:
    port = free_port()
    proc = test_lean_upstream._serve([sys.executable, "-m", "tests.gateway.sse_storm_upstream", str(port)],
                                     port)
    try:
        body = await _logged_from_now(caught, _odd_call(sent()))
        got = await test_lean_upstream._with_upstream(f"http://127.0.0.1:{port}/sse", body, protocol="legacy",
                                                      lean=False)
    finally:
        stop_process(proc)
    _check(got, sent(), caught)


@PATHS
@ERAS
async def test_notices_no_transport_reads_as_a_message_are_unfit_over_streamable_http(
        hostile: str, lean: bool, era: str, caught: pytest.LogCaptureFixture) -> None:
    """A method no string, params no object: the lean path reads them as notices; the SDK's transport read
    none as a message (a traceback each, and the call in flight failed: "Failed to parse SSE message")."""
    body = await _logged_from_now(caught, _odd_call(sent(sdk=False), "odd_methods_call"))
    got = await test_lean_upstream._with_upstream(hostile, body, protocol=era, lean=lean)
    _check(got, sent(sdk=False), caught)


@PATHS
@ERAS
def test_notices_no_transport_reads_as_a_message_are_unfit_over_stdio(
        lean: bool, era: str, caught: pytest.LogCaptureFixture) -> None:
    """Down both paths the SDK's stdio transport parses the line (the lean tap hands it on): it logged a
    traceback each and the call in flight failed ("invalid message")."""
    async def main() -> Any:
        body = await _logged_from_now(caught, _odd_call(sent(sdk=False), "odd_methods_call"))
        return await test_lean_stdio._with_upstream(STDIO, body, protocol=era, lean=lean)
    _check(anyio.run(main), sent(sdk=False), caught)


def test_whatever_the_reader_raises_the_notice_is_unfit_never_the_readers_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from sentinel_mcp.gateway import unfit_notices

    for error in (TypeError("odd"), AttributeError("odd"), RecursionError(), KeyError("x")):
        def raising(*_a: Any, error: BaseException = error) -> Any:
            raise error
        monkeypatch.setattr(unfit_notices.sdk_methods, "parse_server_notification", raising)
        why = unfit_notices.unfit("notifications/message", {"level": "info", "data": 1}, "2025-11-25")
        assert why == (unfit_notices.UNKNOWN if isinstance(error, KeyError) else unfit_notices.MALFORMED)
