"""Two gateways on one data dir (``make run`` over HTTP while a desktop client runs ``serve`` over stdio):
both
serve guarded calls, each writes its own audit log, ``sentinel-mcp audit`` shows them all, and a ``kill -9``
of one leaves the other serving and every record verifiable."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from sentinel_mcp.gateway.audit import read_audit
from sentinel_mcp.gateway.audit_chain import verify_store
from sentinel_mcp.gateway.call_record import META_KEY
from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.storage.instances import Instance, instance_dirs, is_live, settle_dead

from .rig import AUTH, ROOT, audit_rows, executed, kill_tree, start_http, write_config


class StdioGateway:
    """``sentinel-mcp serve`` over stdio, spoken to line by line (as a desktop client does)."""

    def __init__(self, config: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sentinel_mcp", "-c", str(config), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
            start_new_session=True,
        )
        self._id = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._id += 1
        self.proc.stdin.write(
            (
                json.dumps({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}) + "\n"
            ).encode()
        )
        self.proc.stdin.flush()
        while True:  # notifications may come first
            line = self.proc.stdout.readline()
            assert line, "the stdio gateway closed its output"
            msg = json.loads(line)
            if msg.get("id") == self._id:
                assert "result" in msg, msg
                return msg["result"]

    def start(self) -> None:
        assert self.proc.stdin is not None
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "desktop", "version": "1"},
            },
        )
        self.proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        self.proc.stdin.flush()
        deadline = time.monotonic() + 60
        while "rec__do" not in {t["name"] for t in self.request("tools/list", {})["tools"]}:
            assert time.monotonic() < deadline, "the upstream never came up"
            time.sleep(0.2)

    def do(self, mark: str) -> str:
        result = self.request("tools/call", {"name": "rec__do", "arguments": {"mark": mark}})
        assert not result.get("isError"), result
        assert result["content"][0]["text"] == "done:" + mark
        return result["_meta"][META_KEY]


def cli(config: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(config), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def audit_json(config: Path) -> list[dict[str, Any]]:
    out = cli(config, "audit", "--json", "--tail", "500")
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


async def http_calls(port: int, marks: list[str]) -> dict[str, str]:
    async with (
        httpx2.AsyncClient(timeout=60, headers=AUTH) as http,
        Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c,
    ):
        results = await asyncio.gather(*(c.call_tool("rec__do", {"mark": m}) for m in marks))
    for m, r in zip(marks, results):
        assert not r.is_error and r.content[0].text == "done:" + m, r.content[0].text
    return {m: r.meta[META_KEY] for m, r in zip(marks, results)}


async def test_two_gateways_on_one_data_dir_both_serve_and_survive_a_kill_9(tmp_path: Path) -> None:
    # a rulebase: both gateways write the shared fact store too (each its own sessions)
    config = write_config(tmp_path, rulebases=[str(RULEBASES_DIR / "default.pl")])
    store = tmp_path / "data" / "sentinel.db"
    http_proc, port = await asyncio.to_thread(start_http, config)
    desktop = StdioGateway(config)
    try:
        await asyncio.to_thread(desktop.start)
        # both at once: HTTP clients and the desktop gateway's calls interleave on the shared stores
        over_http, over_stdio = await asyncio.gather(
            http_calls(port, [f"h{i}" for i in range(12)]),
            asyncio.to_thread(lambda: {f"s{i}": desktop.do(f"s{i}") for i in range(12)}),
        )
        dirs = instance_dirs(tmp_path / "data")
        assert len(dirs) == 2 and all(is_live(d) for d in dirs)

        rows = audit_json(config)  # what a user reads while both run
        shown = {r["decision_id"]: r for r in rows}
        assert set(over_http.values()) | set(over_stdio.values()) <= set(shown)
        chains = (
            {shown[d]["chain"] for d in over_http.values()},
            {shown[d]["chain"] for d in over_stdio.values()},
        )
        assert len(chains[0]) == 1 and len(chains[1]) == 1 and chains[0] != chains[1]  # one log per gateway

        # kill -9 of the desktop gateway in the middle of HTTP traffic: HTTP goes on, untouched
        traffic = asyncio.create_task(http_calls(port, [f"k{i}" for i in range(16)]))
        await asyncio.sleep(0.2)
        os.kill(desktop.proc.pid, signal.SIGKILL)
        after_kill = await traffic
        after_kill |= await http_calls(port, ["after"])
        assert desktop.proc.wait(10) == -signal.SIGKILL
        assert sum(is_live(d) for d in instance_dirs(tmp_path / "data")) == 1

        verify = cli(
            config, "audit", "verify"
        )  # the dead gateway's log (WAL not yet settled) and the live one
        assert verify.returncode == 0 and "across 2 file(s)" in verify.stdout, verify.stdout + verify.stderr
        shown = {r["decision_id"] for r in await read_audit(store, tail=500)}  # what `audit` reads now
        assert set(over_stdio.values()) <= shown and set(after_kill.values()) <= shown
    finally:
        kill_tree(desktop.proc)
        kill_tree(http_proc)

    # a later gateway settles the dead ones' files: every record still there and verifiable
    proc, port = await asyncio.to_thread(start_http, config)
    try:
        last = await http_calls(port, ["later"])
    finally:
        kill_tree(proc)
    rows = audit_rows(store)
    decided = {json.loads(r["arguments"])["mark"] for r in rows if r["event"] == "decision"}
    finished = {r["decision_id"] for r in rows if r["event"] == "outcome" and r["outcome"] == "ok"}
    # nothing ran without its decision on record; every answered call has its outcome
    assert set(executed(tmp_path)) <= decided
    assert {*over_http.values(), *over_stdio.values(), *after_kill.values(), *last.values()} <= finished
    report = verify_store(store)  # what `audit verify` checks
    assert report.ok and report.files == 3 and report.chains == 3, report  # one per gateway that ran
    assert not list((tmp_path / "data").rglob("*.db-shm"))  # nothing memory-mapped was left by the gateways


def test_an_instance_is_alive_exactly_as_long_as_its_process(tmp_path: Path) -> None:
    """A killed instance is seen dead at once (its lock went with it), its WAL is settled into the file by the
    next gateway, and an instance that recorded nothing leaves no directory behind."""
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sqlite3, sys, time\n"
                "from pathlib import Path\n"
                "from sentinel_mcp.storage.instances import Instance\n"
                "i = Instance.claim(Path(sys.argv[1]))\n"
                "c = sqlite3.connect(i.dir / 'sentinel.db', isolation_level=None)\n"
                "c.execute('PRAGMA locking_mode=EXCLUSIVE'); c.execute('PRAGMA journal_mode=WAL')\n"
                "c.execute('CREATE TABLE audit (x)'); c.execute('INSERT INTO audit VALUES (1)')\n"
                "print(i.dir, flush=True); time.sleep(600)\n"
            ),
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert child.stdout is not None
        directory = Path(child.stdout.readline().strip())
        assert is_live(directory)
        assert settle_dead(tmp_path) == []  # a live instance is never touched
        assert (directory / "sentinel.db-wal").stat().st_size > 0
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        child.kill()
    assert not is_live(directory)
    assert settle_dead(tmp_path) == [directory]  # kept: it recorded something
    assert not (directory / "sentinel.db-wal").exists() or (directory / "sentinel.db-wal").stat().st_size == 0
    with sqlite3.connect(f"file:{directory / 'sentinel.db'}?mode=ro&immutable=1", uri=True) as conn:
        assert conn.execute("SELECT x FROM audit").fetchall() == [(1,)]

    mine = Instance.claim(tmp_path)
    other = Instance.claim(tmp_path)
    assert mine.id != other.id and is_live(mine.dir) and is_live(other.dir)
    mine.release()  # nothing recorded: nothing left
    assert not mine.dir.exists() and other.dir.exists()
    other.release()
    assert instance_dirs(tmp_path) == [directory]


@pytest.mark.parametrize("damage", ["rows deleted", "truncated to nothing", "head and rows deleted"])
def test_an_ended_instance_with_evidence_of_removed_records_is_kept(tmp_path: Path, damage: str) -> None:
    """An audit log whose head counts rows it no longer has, or a database truncated to no bytes, is evidence
    (``audit verify`` reports it); a start or a stop must never tidy it away as an instance that recorded
    nothing. Only a log that never held a row goes."""
    mine = Instance.claim(tmp_path)
    db = mine.dir / "sentinel.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE audit (id INTEGER PRIMARY KEY, x TEXT)")
        conn.execute("CREATE TABLE audit_head (chain TEXT PRIMARY KEY, hash TEXT, rows INTEGER NOT NULL)")
        conn.execute("INSERT INTO audit_head VALUES ('c', 'h', 810)")
        if damage == "head and rows deleted":
            conn.execute("UPDATE audit_head SET rows = 0")
    if damage == "truncated to nothing":
        db.write_bytes(b"")
    mine.release()
    kept = damage != "head and rows deleted"  # a head at 0 rows: nothing was ever recorded there
    assert mine.dir.exists() is kept
    if kept:
        assert settle_dead(tmp_path) == [mine.dir]  # a later gateway keeps it too


def test_an_ended_instance_that_cannot_be_settled_is_kept_and_said(tmp_path: Path) -> None:
    """A dead gateway's database that SQLite cannot open (damaged past its header, a WAL above it) stays as
    it is, and the next gateway says so (its health lists the problem) instead of a warning in a log only."""
    directory = tmp_path / "instances" / "20260101T000000-1-abcdef"
    directory.mkdir(parents=True)
    (directory / "lock").write_bytes(b"")
    (directory / "sentinel.db").write_bytes(b"not a database at all " * 300)
    (directory / "sentinel.db-wal").write_bytes(b"\x37\x7f\x06\x82" + b"\x00" * 4000)
    problems: list[str] = []
    assert settle_dead(tmp_path, problems) == [directory]
    assert len(problems) == 1 and str(directory / "sentinel.db") in problems[0], problems
    assert (directory / "sentinel.db").read_bytes().startswith(b"not a database")  # left as it was
