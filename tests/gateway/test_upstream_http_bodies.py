"""An HTTP upstream's answers on the SDK client's path are bounded before anything buffers them
(gateway/upstream_http_bodies.py): a compressed body is refused whatever its encoding's spelling, a plain one
ends past 16 MiB. Before, a tools/list answer of 24 MB (plain, or gzip/deflate of 24 KB) was read whole and
served, and a gzip body inflating to 2 GB took 9 GB of the gateway's memory. The honest upstream beside them
is served throughout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import anyio
import httpx2
import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.upstream_http_bodies import EVENT_SLACK, BodyRefused, bound_body

from ..conftest import free_port, stop_process, wait_http
from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]
HOSTILE = {"gz": "gzip", "df": "Deflate", "gz2": " GZip", "plain": ""}


def _rss_kb() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))


@pytest.fixture
def hostile() -> Iterator[dict[str, str]]:
    procs: list[subprocess.Popen] = []
    urls: dict[str, str] = {}
    try:
        for name, encoding in HOSTILE.items():
            port = free_port()
            env = {**os.environ, "ENCODING": encoding, "SIZE": str(24 * 1024 * 1024), "PYTHONPATH": str(ROOT)}
            proc = subprocess.Popen([sys.executable, "-m", "tests.gateway.bodies_http_upstream", str(port)],
                                    cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True)
            procs.append(proc)
            wait_http(f"http://127.0.0.1:{port}/mcp", proc=proc)
            urls[name] = f"http://127.0.0.1:{port}/mcp"
        yield urls
    finally:
        for proc in procs:
            stop_process(proc)


async def test_compressed_or_oversized_answers_are_refused_not_read(data_dir, hostile: dict[str, str]):
    servers: dict[str, Any] = {name: {"url": url, "protocol": "legacy", "timeout": 20}
                               for name, url in hostile.items()}
    servers["tb"] = toolbox_stdio()
    before = _rss_kb()
    async with running_gateway(make_config(data_dir, servers), startup_wait=3.0) as rt:
        ups = rt.manager.upstreams
        with anyio.fail_after(60):
            while not all(ups[n].last_error for n in HOSTILE):
                await anyio.sleep(0.1)
        for name in HOSTILE:
            assert ups[name].tools == {}, name  # the 24 MB listing was never taken
            why = ups[name].last_error or ""
            assert ("compressed" if name != "plain" else "larger than 16,777,216 bytes") in why, (name, why)
        assert _rss_kb() - before < 200_000  # nothing near the bodies' size was held
        # the good upstream serves meanwhile (on a loaded machine its start may outlast the start-up wait)
        assert await ups["tb"].wait_ready(60), ups["tb"].last_error
        async with Client(rt.front.server) as c:
            assert (await c.call_tool("tb__echo", {"text": "fine"})).content[0].text == "fine"
            assert not any(t.name.endswith("__big") for t in (await c.list_tools()).tools)


class _Chunks(httpx2.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> Any:
        for c in self.chunks:
            yield c


async def _read_events(chunks: list[bytes], limit: int) -> bytes:
    response = httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=_Chunks(chunks))
    await bound_body(response, limit)
    return b"".join([c async for c in response.stream])  # type: ignore[union-attr]


@pytest.mark.parametrize("end", [b"\n\n", b"\r\n\r\n", b"\r\r", b"\r\n\n", b"\n\r\n"])
async def test_an_event_stream_is_bounded_per_event_on_its_raw_bytes(end: bytes) -> None:
    """Many small events past the bound in all pass (each is within it), split anywhere, whatever line ends
    they use; one event of many small data lines past the bound (plus ``EVENT_SLACK``) is refused."""
    limit = 2048
    small = b"event: message" + end[: len(end) // 2] + b"data: " + b"x" * 500 + end
    stream = small * 40  # 20 KB in all
    cuts = [stream[i:i + 7] for i in range(0, len(stream), 7)]  # every edge, a line end's halves included
    assert await _read_events(cuts, limit) == stream
    line_end = end[: len(end) // 2]
    big = (b"data: " + b"x" * 57 + line_end) * ((limit + EVENT_SLACK) // 60 + 10) + line_end
    with pytest.raises(BodyRefused, match="larger than 2,048 bytes"):
        await _read_events([small, *[big[i:i + 7] for i in range(0, len(big), 7)]], limit)
