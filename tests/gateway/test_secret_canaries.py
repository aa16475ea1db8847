"""The sweep: canary secrets (a secret argument's value, the owner's HTTP token, the console secret) planted,
calls driven through the HTTP front (allowed, denied, asked, failed upstream with the password in its error,
timed out), then every output grepped for them: the audit log (``audit --json``), the gateway's stderr at
debug level, ``/metrics``, ``/healthz``, the questions asked, ``config show``. Real gateway process, real
upstream process, real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult
from tests.gateway.test_observability import get

from ..conftest import free_port, stop_process, wait_http

pytestmark = pytest.mark.timeout(180)
SERVER = str(Path(__file__).with_name("secret_server.py"))
PASSWORD = "Canary-Pw-4417-xq"
TOKEN = "canary-owner-token-8812-zz"
CONSOLE = "canary-console-secret-55qk"
TOOLS = ("login", "denied_login", "failing_login", "hanging_login", "set_password", "asking_login")
CANARIES = (PASSWORD, TOKEN, CONSOLE, "4417-xq", "8812-zz", "55qk")


def leaks(text: str) -> list[str]:
    return [c for c in CANARIES if c in text]


def write_config(tmp_path: Path) -> Path:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"sec": {"command": sys.executable, "args": [SERVER], "timeout": 3}},
        "sentinel": {"data_dir": str(tmp_path / "state"), "policy": {"deny": ["sec__denied_login"]},
                     "http": {"token": TOKEN, "console_secret": CONSOLE}},
    }))
    return cfg


async def drive(target: Any, outputs: dict[str, str]) -> None:
    """The calls (allowed, denied, failed upstream, timed out, asked and approved, asking the person from
    the upstream), the questions and results kept in ``outputs``."""
    asked: list[str] = []

    async def approve(ctx, params):  # noqa: ANN001
        asked.append(params.message)
        fields = params.requested_schema.get("properties") or {}
        return ElicitResult(action="accept", content={name: True for name in fields})

    async with Client(target, elicitation_callback=approve) as c:
        for tool in TOOLS:
            result = await c.call_tool(f"sec__{tool}", {"user": "ann", "password": PASSWORD})
            outputs[f"result of {tool}"] = result.model_dump_json()
    outputs["questions"] = "\n".join(asked)


def read_back(cfg: Path, outputs: dict[str, str]) -> None:
    """What the CLI shows afterwards, then the check: no planted secret in any output but the results."""
    for argv in (["audit", "--json"], ["config", "show"], ["audit"]):
        done = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), *argv],
                              capture_output=True, text=True, timeout=60)
        outputs[" ".join(argv)] = done.stdout + done.stderr
    assert "sec__set_password" in outputs["questions"], outputs
    assert "Really sign ann in" in outputs["questions"], outputs
    assert "welcome ann" in outputs["result of login"]
    assert "sec__failing_login" in outputs["audit --json"]
    assert "[upstream sec]" in outputs["stderr"] and "wrong password" in outputs["stderr"]  # it was read
    # what the client is answered may hold the value it sent itself: every other output may not
    found = {name: leaks(text) for name, text in outputs.items()
             if not name.startswith("result of") and leaks(text)}
    assert not found, {name: [(c, text[max(0, text.find(c) - 200):text.find(c) + 80]) for c in cs]
                       for name, cs in found.items() for text in [outputs[name]]}


async def test_no_output_of_the_http_front_carries_a_planted_secret(tmp_path: Path) -> None:
    cfg = write_config(tmp_path)
    port = free_port()
    err = (tmp_path / "stderr.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-v", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
    )
    outputs: dict[str, str] = {}
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        await drive(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)), outputs)
        outputs["metrics"] = get(f"http://127.0.0.1:{port}/metrics", TOKEN)[2]
        outputs["healthz"] = get(f"http://127.0.0.1:{port}/healthz")[2]
        outputs["healthz (owner)"] = get(f"http://127.0.0.1:{port}/healthz", TOKEN)[2]
    finally:
        stop_process(proc)
        err.close()
    outputs["stderr"] = (tmp_path / "stderr.log").read_text(errors="replace")
    read_back(cfg, outputs)


async def test_no_output_of_the_stdio_front_carries_a_planted_secret(tmp_path: Path) -> None:
    cfg = write_config(tmp_path)
    log = tmp_path / "stderr.log"
    # the gateway's own stderr (debug level) into a file: the shell only redirects it
    params = StdioServerParameters(command="/bin/sh", args=[
        "-c", 'exec "$0" -m sentinel_mcp -v -c "$1" serve 2>"$2"', sys.executable, str(cfg), str(log)])
    outputs: dict[str, str] = {}
    await drive(params, outputs)
    outputs["stderr"] = log.read_text(errors="replace")
    read_back(cfg, outputs)
