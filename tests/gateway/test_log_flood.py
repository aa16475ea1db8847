"""What an upstream makes the gateway log is bounded (core/log_window.py): a stdio upstream writing 20,000
lines that are not JSON-RPC messages took the SDK's traceback and Sentinel's warning for each, some 20 MB of
the served gateway's stderr (the desktop app's log) in seconds. The gateway serving it goes on answering."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ..conftest import free_port, stop_process, wait_http

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("kind", ["json", "text", "mixed"])
async def test_an_upstreams_garbage_lines_do_not_flood_the_log(tmp_path: Path, kind: str) -> None:
    server = {"command": sys.executable, "args": ["-m", "tests.gateway.garbage_stdio_upstream"],
              "env": {"KIND": kind, "N": "4000", "PYTHONPATH": str(ROOT)}, "timeout": 60}
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"gb": server},
                               "sentinel": {"data_dir": str(tmp_path / "data"), "builtins": []}}))
    port = free_port()
    stderr = tmp_path / "stderr"
    with stderr.open("wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http",
                                 f"127.0.0.1:{port}"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err,
                                start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        printed = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "config", "token"],
                                 cwd=ROOT, capture_output=True, text=True, check=True).stdout
        token = printed.strip().split()[-1]

        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                      timeout=httpx2.Timeout(30, read=90)) as http:
            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http),
                              mode="legacy") as c:
                with anyio.fail_after(90):
                    # a call waiting while garbage arrives ends at once (its answer may be lost in it): the
                    # gateway answers throughout, and the upstream once its flood is over
                    while True:
                        r = await c.call_tool("gb__ok", {})
                        if not r.is_error and r.content[0].text == "flood over":
                            break
                        await anyio.sleep(0.2)
        await anyio.sleep(1.0)  # the last lines read
    finally:
        stop_process(proc)
    logged = stderr.read_bytes()
    # 4,000 such lines logged one by one were ~4 MB (the test's bound is well under a tenth of that)
    assert len(logged) < 300_000, (len(logged), logged[-2000:])


def test_the_window_is_put_on_the_processs_own_handlers_once():
    """``main`` also runs inside other programs (a test run calls it): their handlers, such as pytest's one
    capture handler for every test, are left alone (a window there counted one test's lines against the
    next's); the process's stderr handler gets one window, however often ``main`` runs."""
    import io
    import logging
    import sys

    from sentinel_mcp.core.log_window import LogWindow, bound_log

    logger = logging.getLogger("sentinel-test-log-window")
    own, other = logging.StreamHandler(sys.stderr), logging.StreamHandler(io.StringIO())
    logger.addHandler(own)
    logger.addHandler(other)
    try:
        bound_log(logger)
        bound_log(logger)
        assert [type(f) for f in own.filters] == [LogWindow] and other.filters == []
    finally:
        logger.removeHandler(own)
        logger.removeHandler(other)
