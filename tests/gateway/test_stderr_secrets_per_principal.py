"""What an upstream writes on its stderr (Sentinel's log) is masked with the secret values each principal sent
it, each principal's list its own (``core/sent_secrets.py``): one principal's flood of secrets never pushes
another's out, so a password an upstream writes later is still masked; and the process of a
``per_principal`` upstream, which only one principal's calls reach, has its lines masked with that principal's
values only, so another principal's "secret" never hides words of it. Before, one list per upstream held the
last 256 values sent by anyone: alice's 266 calls pushed bob's password out, and bob's password, written by
the server afterwards, stood in the log in clear; alice's "secret" ``welcome`` hid that word from bob's
process's lines. A line of a shared process cannot be told to belong to a call (the server writes it when it
likes), so it is masked with every principal's values. Real gateway, real upstream, real HTTP on 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from sentinel_mcp.core import sent_secrets
from tests.conftest import free_port, stop_process, wait_http

pytestmark = pytest.mark.timeout(300)
SERVER = str(Path(__file__).with_name("stderr_secret_server.py"))
ALICE, BOB = "alice-stderr-secrets-token-0123456789", "bob-stderr-secrets-token-0123456789ab"
BOB_PW = "Bob-Stderr-Pw-7730"


@contextlib.contextmanager
def _gateway(tmp_path: Path, isolation: str | None) -> Iterator[tuple[int, Path]]:
    server: dict[str, Any] = {"command": sys.executable, "args": [SERVER], "timeout": 10}
    if isolation:
        server["isolation"] = isolation
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"up": server},
        "sentinel": {"data_dir": str(tmp_path / "state"), "builtins": [],
                     "principals": [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}]}}))
    port, log = free_port(), tmp_path / "sentinel.stderr"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        yield port, log
    finally:
        stop_process(proc)


async def _call(port: int, token: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=client)) as c:
        for tool, arguments in calls:
            r = await c.call_tool(f"up__{tool}", arguments)
            assert not r.is_error, (tool, r.content)


def _lines(log: Path, mark: str, count: int) -> list[str]:
    """The relayed lines holding ``mark``, once ``count`` of them are there (polled a bounded number of
    times: the relay writes them from its own thread)."""
    for _ in range(400):
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if mark in ln]
        if len(lines) >= count:
            return lines
        time.sleep(0.05)
    raise AssertionError(f"no {count} lines with {mark!r}: {log.read_text(errors='replace')[-3000:]}")


@pytest.mark.parametrize("isolation", [None, "per_principal"])
async def test_another_principals_flood_never_unmasks_a_password_the_server_writes_later(
        tmp_path: Path, isolation: str | None) -> None:
    with _gateway(tmp_path, isolation) as (port, log):
        await _call(port, BOB, [("keep", {"user": "bob", "password": BOB_PW})])
        flood = [("keep", {"user": "alice", "password": f"alice-flood-{n:04d}"})
                 for n in range(sent_secrets.MAX_KEPT + 10)]
        await _call(port, ALICE, flood)
        await _call(port, BOB, [("dump_first", {})])
        (line,) = _lines(log, "FIRST-KEPT", 1)
    assert BOB_PW not in line and f"<[redacted {len(BOB_PW)} chars]>" in line, line


# what alice sends as her "password" to hide a word of the lines bob's own process writes
HIDING = ["welcome", "DELETE", "500", "mallory", "Pay 500"]


async def test_another_principals_secret_never_masks_a_line_of_a_principals_own_process(
        tmp_path: Path) -> None:
    said = [f"{word} to bob, from his own process" for word in HIDING]
    with _gateway(tmp_path, "per_principal") as (port, log):
        await _call(port, ALICE, [("keep", {"user": "alice", "password": word}) for word in HIDING])
        await _call(port, BOB, [("keep", {"user": "bob", "password": BOB_PW})]
                    + [("say", {"text": text}) for text in said] + [("say", {"text": f"pw {BOB_PW}"})])
        lines = _lines(log, "SAID <", len(said) + 1)
    for text in said:
        assert any(f"SAID <{text}>" in ln for ln in lines), (text, lines)  # bob's lines, whole
    assert not any(BOB_PW in ln for ln in lines), lines  # bob's own password still masked
    assert any(f"SAID <pw [redacted {len(BOB_PW)} chars]>" in ln for ln in lines), lines


async def test_a_line_of_a_shared_process_is_masked_with_every_principals_values(tmp_path: Path) -> None:
    with _gateway(tmp_path, None) as (port, log):
        await _call(port, ALICE, [("keep", {"user": "alice", "password": "alice-pw-4471"})])
        await _call(port, BOB, [("keep", {"user": "bob", "password": BOB_PW}),
                                ("say", {"text": f"alice-pw-4471 and {BOB_PW}"})])
        (line,) = _lines(log, "SAID <", 1)
    assert "alice-pw-4471" not in line and BOB_PW not in line, line


def test_one_principals_sending_to_many_upstreams_never_pushes_anothers_list_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sent_secrets, "MAX_OWNER_CHARS", 10_000)
    monkeypatch.setattr(sent_secrets, "MAX_CHARS", 50_000)
    monkeypatch.setattr(sent_secrets, "_by_pair", sent_secrets._Kept(sent_secrets.MAX_PAIRS))
    sent_secrets.remember("bob", "up-bob", {"password": "bob-pw-3391"}, ["password"])
    for u in range(200):  # mallory: 1,000 characters to each of 200 upstreams
        sent_secrets.remember("mallory", f"up-{u}", {"password": f"{u:03d}-" + "m" * 996}, ["password"])
    kept = sent_secrets._by_pair
    assert sum(n for k, n in kept.chars.items() if k[1] == "mallory") <= 10_000 and kept.total <= 50_000
    assert sent_secrets.scrubbed("x bob-pw-3391 x", "up-bob") == "x [redacted 11 chars] x"
    assert sent_secrets.scrubbed("x bob-pw-3391 x", "up-bob", "bob") == "x [redacted 11 chars] x"
    assert sent_secrets.scrubbed("x bob-pw-3391 x", "up-bob", "mallory") == "x bob-pw-3391 x"
    newest = "199-" + "m" * 996
    assert newest not in sent_secrets.scrubbed(f"x {newest} x", "up-199", "mallory")  # her newest kept
