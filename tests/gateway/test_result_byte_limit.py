"""An upstream's answer is bounded on its raw bytes before any of it is parsed (``max_result_bytes``, per
server): parsing holds the event loop (a 16 MiB answer of many blocks ~0.9 s, every other caller
waiting), and the 1,000-block limit applied only after the parse. A hostile upstream that streams an answer
past its server's limit (and then stalls before its end) is cut off at the limit: its caller gets a clear
error at once, another call is answered meanwhile, and the upstream's next call works. A real stdio upstream
in both eras through the real gateway and clients; a real streamable-HTTP upstream in both eras, down the
lean path and the SDK client's."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from tests.gateway.helpers import make_config, toolbox_stdio
from tests.gateway.hostile_stdio_upstream import HUGE
from sentinel_mcp.gateway.upstream import UpstreamCallError
from tests.gateway.test_lean_stdio import HOSTILE, ROOT
from tests.conftest import free_port, stop_process
from tests.gateway.test_lean_upstream import _serve, _with_upstream

pytestmark = pytest.mark.timeout(180)
LIMIT = 1024 * 1024


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
async def test_an_answer_past_the_servers_byte_limit_is_refused_before_it_is_parsed(
    data_dir: Any, protocol: str
) -> None:
    assert HUGE > LIMIT
    servers = {
        "h": {"command": HOSTILE[0], "args": HOSTILE[1:], "cwd": str(ROOT), "protocol": protocol,
              "max_result_bytes": LIMIT},
        "tb": toolbox_stdio(),
    }
    async with running_gateway(make_config(data_dir, servers)) as rt:
        up = rt.manager.upstreams["h"]
        assert await up.wait_ready(30)
        refused: list[Any] = []
        async with Client(rt.front.server, mode="legacy") as a, Client(rt.front.server, mode="legacy") as b:

            async def huge() -> None:
                refused.append(await a.call_tool("h__huge_answer", {}))

            with anyio.fail_after(60):  # the answer never ends: only the limit ends this call
                async with anyio.create_task_group() as tg:
                    tg.start_soon(huge)
                    other = await b.call_tool("tb__echo", {"text": "still here"})
                    assert not other.is_error and "still here" in other.content[0].text, other
            (r,) = refused
            said = r.content[0].text
            assert r.is_error and f"more than {LIMIT} bytes" in said and "max_result_bytes" in said, said
            for _ in range(600):  # the process is spawned again (bounded by count, up to a minute)
                if up.reconnects and up.state == "ready":
                    break
                await anyio.sleep(0.1)
            assert (await a.call_tool("h__noop", {})).content[0].text == "ok"


@pytest.fixture(scope="module")
def hostile_http() -> Any:
    port = free_port()
    proc = _serve([sys.executable, "-m", "tests.gateway.hostile_http_upstream", str(port)], port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)


@pytest.mark.parametrize("lean", [True, False])
@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_an_http_answer_past_the_servers_byte_limit_is_refused_before_it_is_parsed(
    hostile_http: str, protocol: str, lean: bool
) -> None:
    """The same over streamable HTTP: the lean path's body read and the SDK client's response hook stop at
    the server's limit, while the upstream still streams; another call is answered meanwhile."""

    async def body(up: Any) -> tuple[str, str]:
        said: list[str] = []

        async def huge() -> None:
            try:
                await up.call_tool("huge_stall", {})
                said.append("answered")
            except UpstreamCallError as e:
                said.append(str(e))

        with anyio.fail_after(45):  # the answer stalls 60 s before its end: only the limit ends it sooner
            async with anyio.create_task_group() as tg:
                tg.start_soon(huge)
                other = await up.call_tool("noop", {})
        return said[0], other.content[0].text

    said, other = anyio.run(lambda: _with_upstream(hostile_http, body, protocol=protocol, lean=lean,
                                                   max_result_bytes=LIMIT))
    assert other == "ok"
    assert "larger than" in said and (f"{LIMIT}" in said or f"{LIMIT:,}" in said), said


def test_the_limit_is_the_servers_within_the_gateways_own() -> None:
    from sentinel_mcp.gateway.lean_upstream import MAX_ANSWER_BYTES, answer_limit

    def server(**over: Any) -> Any:
        cfg = parse_config({"mcpServers": {"s": {"command": "x", **over}}, "sentinel": {}}, source="<t>")
        return cfg.mcp_servers["s"]

    assert answer_limit(server()) == MAX_ANSWER_BYTES
    assert answer_limit(server(max_result_bytes=4096)) == 4096
    for bad in (0, 1023, MAX_ANSWER_BYTES + 1, "4096", 4096.0, True):
        with pytest.raises(Exception, match="max_result_bytes"):
            server(max_result_bytes=bad)
