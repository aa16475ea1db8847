"""Sentinel as a real process: stdio and HTTP (streamable + SSE) fronts, an HTTP upstream, no orphans."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult

from ..conftest import free_port, stop_process, wait_http
from .helpers import TOOLBOX, alive, descendants

pytestmark = pytest.mark.timeout(120)


async def approve(ctx, params):  # noqa: ANN001
    return ElicitResult(action="accept", content={"approve": True})


def write_config(tmp_path: Path, servers: dict, **sentinel) -> Path:  # noqa: ANN003
    cfg = tmp_path / "sentinel.json"
    sentinel.setdefault("data_dir", str(tmp_path / "state"))
    cfg.write_text(json.dumps({"mcpServers": servers, "sentinel": sentinel}))
    return cfg


@pytest.fixture
def http_upstream():
    port = free_port()
    proc = subprocess.Popen([sys.executable, TOOLBOX, "--http", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{port}/mcp", proc=proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stdio_front_with_a_stdio_and_an_http_upstream(tmp_path, http_upstream, mode):
    cfg = write_config(tmp_path, {"local": {"command": sys.executable, "args": [TOOLBOX]},
                                  "remote": {"url": http_upstream}})
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "sentinel_mcp", "-c", str(cfg), "serve"]
    )
    async with Client(params, mode=mode, elicitation_callback=approve) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        assert {"local__echo", "remote__echo"} <= names
        assert (await c.call_tool("remote__echo", {"text": "over http"})).content[0].text == "over http"
        assert (await c.call_tool("local__delete_thing", {"name": "z"})).content[0].text == "deleted z"


def start_http_sentinel(cfg: Path, port: int, *extra: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sentinel_mcp",
            "-c",
            str(cfg),
            "serve",
            "--http",
            f"127.0.0.1:{port}",
            *extra,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc)
    return proc


@pytest.fixture
def http_sentinel(tmp_path):
    port = free_port()
    cfg = write_config(
        tmp_path, {"tb": {"command": sys.executable, "args": [TOOLBOX]}}, http={"token": "s3cret"}
    )
    proc = start_http_sentinel(cfg, port)
    yield port, proc
    stop_process(proc)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
async def test_http_front_both_transports_both_eras(http_sentinel, mode, transport):
    port, _ = http_sentinel
    headers = {"Authorization": "Bearer s3cret"}
    if transport == "sse":
        target = sse_client(f"http://127.0.0.1:{port}/sse", headers=headers)
    else:
        target = streamable_http_client(
            f"http://127.0.0.1:{port}/mcp", http_client=httpx2.AsyncClient(headers=headers, timeout=30)
        )
    async with Client(target, mode=mode, elicitation_callback=approve) as c:
        assert "tb__echo" in {t.name for t in (await c.list_tools()).tools}
        assert (await c.call_tool("tb__echo", {"text": transport})).content[0].text == transport
        assert (await c.call_tool("tb__delete_thing", {"name": mode})).content[0].text == f"deleted {mode}"


def test_http_front_refuses_missing_token_and_foreign_hosts(http_sentinel):
    port, _ = http_sentinel
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()

    def post(headers: dict) -> int:
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/mcp",
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", **headers},
        )
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code

    assert post({}) == 401
    assert post({"Authorization": "Bearer wrong"}) == 401
    assert post({"Authorization": "Bearer s3cret", "Host": "evil.example:80"}) == 421
    assert post({"Authorization": "Bearer s3cret", "Origin": "http://evil.example"}) == 403
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as r:
        assert json.loads(r.read()) == {"status": "ok"}  # public: the status word only
    authed = urllib.request.Request(
        f"http://127.0.0.1:{port}/healthz", headers={"Authorization": "Bearer s3cret"}
    )
    with urllib.request.urlopen(authed, timeout=5) as r:
        health = json.loads(r.read())
    assert health["status"] == "ok" and health["upstreams"]["tb"]["state"] == "ready"


def test_no_process_is_left_behind_after_shutdown(tmp_path):
    # the upstream spawns a grandchild too (sh -> python): the whole process group must go
    cfg = write_config(
        tmp_path,
        {
            "a": {"command": sys.executable, "args": [TOOLBOX]},
            "b": {"command": "sh", "args": ["-c", f"sleep 300 & exec {sys.executable} {TOOLBOX}"]},
        },
    )
    port = free_port()
    proc = start_http_sentinel(cfg, port)
    kids = descendants(proc.pid)
    assert len(kids) >= 3, kids  # two upstreams and the background sleep
    assert stop_process(proc, signal.SIGTERM) is not None
    anyio.run(anyio.sleep, 0.5)
    assert [k for k in kids if alive(k)] == []


def test_stdio_serve_exits_cleanly_when_the_client_goes_away(tmp_path):
    cfg = write_config(tmp_path, {"a": {"command": sys.executable, "args": [TOOLBOX]}})
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    proc.stdin.write((json.dumps(init) + "\n").encode())
    proc.stdin.flush()
    line = proc.stdout.readline()
    assert json.loads(line)["result"]["serverInfo"]["name"] == "sentinel"
    kids = descendants(proc.pid)
    assert kids
    proc.stdin.close()
    assert proc.wait(20) == 0
    anyio.run(anyio.sleep, 0.5)
    assert [k for k in kids if alive(k)] == []
