"""``logging/setLevel`` is the asking connection's own: one client's level never changes which log lines
another receives. Alice raising her level (up to "emergency": nothing) left bob, who set none, or who asked
for more, with only what she asked for (the one upstream they share was set to her level); a 2026-era client
asking for lines per request lost them the same way. Sentinel asks the upstream for every line once any
client sets a level, and each connection (each 2026-era request) gets the lines at its own level.

A real Sentinel over HTTP, an upstream over streamable HTTP (each line on its call's stream: attributed
exactly, whoever calls) that keeps the level it is set to (as a careful server does), real MCP clients in both
eras; a call's log lines come before its answer, so each call's lines are all in when it returns."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .identity_rig import ALICE, BOB, free_port, http_sentinel, stop_process, wait_http

pytestmark = pytest.mark.timeout(180)
LEVELED = Path(__file__).with_name("leveled_server.py")
EVERY = ["debug line", "info line", "warning line", "error line"]


@pytest.fixture
def upstream() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(LEVELED), "--http", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/mcp", proc=proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)


def _config(tmp: Path, url: str) -> Path:
    cfg = tmp / "sentinel.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"lv": {"url": url, "protocol": "legacy"}},
        "sentinel": {"data_dir": str(tmp / "state"), "builtins": [],
                     "principals": [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}]},
    }))
    return cfg


def _client(base: str, token: str, lines: list[str], mode: str = "legacy", **kw: Any) -> Client:
    async def on_log(params: Any) -> None:
        lines.append(str(params.data))

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode, logging_callback=on_log,
                  **kw)


async def _speak(client: Client, lines: list[str]) -> list[str]:
    lines.clear()
    await client.call_tool("lv__speak", {})
    return list(lines)


@pytest.mark.parametrize("raised_to", ["warning", "error", "emergency"])
async def test_a_level_one_client_sets_never_narrows_what_another_receives(
        tmp_path: Path, upstream: str, raised_to: str) -> None:
    with http_sentinel(_config(tmp_path, upstream)) as (base, _proc):
        hers: list[str] = []
        unset: list[str] = []
        info: list[str] = []
        modern: list[str] = []
        async with (_client(base, ALICE, hers) as alice, _client(base, BOB, unset) as bob,
                    _client(base, BOB, info) as bob_info,
                    _client(base, BOB, modern, mode="auto", log_level="debug") as bob_modern):
            before = (await _speak(bob, unset), await _speak(bob_modern, modern))
            assert before == (EVERY, EVERY), before  # no level set anywhere: every line
            await alice.set_logging_level(raised_to)  # hers alone
            assert await _speak(alice, hers) == LEVELS_AT[raised_to]
            after = (await _speak(bob, unset), await _speak(bob_modern, modern))
            assert after == before, (raised_to, after)
            await bob_info.set_logging_level("info")  # another connection's level: its own
            assert await _speak(bob_info, info) == EVERY[1:]
            assert (await _speak(bob, unset), await _speak(bob_modern, modern)) == before
            await alice.set_logging_level("debug")  # lowered again: still each connection's own
            assert await _speak(alice, hers) == EVERY
            assert await _speak(bob_info, info) == EVERY[1:]


LEVELS_AT = {"warning": EVERY[2:], "error": EVERY[3:], "emergency": []}
