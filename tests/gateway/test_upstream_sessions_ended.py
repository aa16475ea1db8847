"""Every ``Mcp-Session-Id`` session Sentinel opens on a streamable-HTTP upstream is ended with the ``DELETE``
the spec asks for when Sentinel drops it: at shutdown, and when the upstream answered under another session's
id (refused, reconnected: the old session ended, the other one, never Sentinel's, left alone). On both paths
(lean and the SDK client's). Checked, not fixed: it held on main (the SDK's transport sends the DELETE as its
context exits, and Sentinel's stop and reconnect exit it cleanly). A raw HTTP upstream on 127.0.0.1 that
keeps a ledger of every request (``session_ledger_http.py``)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from sentinel_mcp.config import RemoteServer
from sentinel_mcp.gateway.upstream import Upstream, UpstreamCallError, UpstreamHooks
from tests.gateway.helpers import free_port, stop_process, wait_http

pytestmark = pytest.mark.timeout(180)
SERVER = str(Path(__file__).parent / "session_ledger_http.py")


async def _nothing(*_a: Any, **_k: Any) -> None:
    return None


async def _ledger(tmp_path: Path, calls: int, *mode: str) -> tuple[list[dict[str, Any]], list[str]]:
    """``calls`` calls through an upstream of ``mode``, then its stop: the ledger and each call's outcome."""
    ledger, port = tmp_path / "ledger.jsonl", free_port()
    proc = subprocess.Popen([sys.executable, SERVER, str(port), str(ledger), *mode], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    outcomes: list[str] = []
    try:
        wait_http(f"http://127.0.0.1:{port}/mcp", proc=proc)
        up = Upstream("lg", RemoteServer(url=f"http://127.0.0.1:{port}/mcp", timeout=30),  # type: ignore[arg-type]
                      UpstreamHooks(catalog_changed=_nothing), health_interval=3600)
        async with anyio.create_task_group() as tg:
            tg.start_soon(up.run)
            try:
                for i in range(calls):
                    with anyio.fail_after(60):  # each call on a session of its own: its handshake seen first
                        while _handshakes(ledger) <= i:
                            await anyio.sleep(0.05)
                    assert await up.wait_ready(30), up.last_error
                    with anyio.fail_after(60):
                        try:
                            outcomes.append((await up.call_tool("echo", {})).content[0].text)
                        except UpstreamCallError as e:
                            outcomes.append(str(e))
            finally:
                with contextlib.suppress(Exception):
                    await up.stop()
    finally:
        stop_process(proc)
    return [json.loads(line) for line in ledger.read_text().splitlines()], outcomes


def _handshakes(ledger: Path) -> int:
    text = ledger.read_text() if ledger.exists() else ""
    return sum(json.loads(line)["method"] == "initialize" for line in text.splitlines())


def _opened_and_ended(entries: list[dict[str, Any]]) -> tuple[set[str], list[str]]:
    opened = {e["session"] for e in entries if e["verb"] == "POST" and e["session"]}
    return opened, [e["session"] for e in entries if e["verb"] == "DELETE"]


@pytest.mark.parametrize("lean", ["on", "off"])
async def test_the_session_is_deleted_at_shutdown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  lean: str) -> None:
    monkeypatch.setenv("SENTINEL_LEAN_UPSTREAM", lean)
    entries, outcomes = await _ledger(tmp_path, 1)
    assert outcomes == ["ok"], outcomes
    opened, ended = _opened_and_ended(entries)
    assert opened == {"s1"} and ended == ["s1"], entries
    assert entries[-1]["verb"] == "DELETE", entries  # nothing asked on it after


@pytest.mark.parametrize("lean", ["on", "off"])
async def test_a_switched_session_ends_the_old_one_and_leaves_the_other(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lean: str) -> None:
    monkeypatch.setenv("SENTINEL_LEAN_UPSTREAM", lean)
    entries, outcomes = await _ledger(tmp_path, 2, "switch")
    assert all("went away" in o for o in outcomes) and len(outcomes) == 2, outcomes
    opened, ended = _opened_and_ended(entries)
    assert len(opened) >= 2 and "s-other" not in opened, entries  # each call on a session of its own
    assert sorted(ended) == sorted(opened), entries  # every one ended, once; s-other never
