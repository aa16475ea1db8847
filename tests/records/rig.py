"""Real gateway processes for the durability tests: config, start, stop, process trees."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from sentinel_mcp.config import Config, parse_config
from tests.conftest import free_port, wait_http
from tests.gateway.helpers import alive, descendants

RECORDER = str(Path(__file__).with_name("recorder_server.py"))
ROOT = Path(__file__).resolve().parents[2]
TOKEN = "records-owner-token-0123456789"  # the owner's token in these configs (HTTP and A2A ask for it)
AUTH = {"Authorization": f"Bearer {TOKEN}"}
# the owner's console sign-in secret in these configs (what the console rig's ``console_secret(TOKEN)`` gives)
CONSOLE_SECRET = "console-secret-of-" + TOKEN


def write_config(tmp: Path, *, grandchild: bool = False, builtins: list[str] | None = None,
                 timeout: float = 20.0, rulebases: list[str] | None = None,
                 audit_sync: str | None = None) -> Path:
    env = {"RECORDER_LOG": str(tmp / "executed.log")}
    if grandchild:
        env["RECORDER_GRANDCHILD"] = "1"
    cfg = {
        "mcpServers": {
            "rec": {"command": sys.executable, "args": [RECORDER], "env": env, "timeout": timeout}
        },
        "sentinel": {
            "data_dir": str(tmp / "data"),
            "builtins": builtins or [],
            "http": {"token": TOKEN, "console_secret": CONSOLE_SECRET},
            "rulebases": rulebases or [],
            **({"audit": {"sync": audit_sync}} if audit_sync is not None else {}),
        },
    }
    path = tmp / "config.json"
    path.write_text(json.dumps(cfg))
    return path


def recorder_config(tmp: Path) -> Config:
    """An in-process gateway's config: the recorder upstream as ``rec``, data under ``tmp/data``."""
    return parse_config({"mcpServers": {"rec": {"command": sys.executable, "args": [RECORDER],
                                                "env": {"RECORDER_LOG": str(tmp / "executed.log")}}},
                         "sentinel": {"data_dir": str(tmp / "data"), "builtins": []}},
                        source="<test>", base_dir=tmp)


def start_http(config: Path, port: int | None = None) -> tuple[subprocess.Popen, int]:
    port = port or free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(config), "serve", "--http", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        start_new_session=True,
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        wait_ready(port)
    except BaseException:
        kill_tree(proc)
        raise
    return proc, port


def wait_ready(port: int, upstream: str = "rec", timeout: float = 30) -> dict[str, Any]:
    import urllib.request

    deadline = time.monotonic() + timeout
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        with urllib.request.urlopen(_healthz(port), timeout=5) as r:
            body = json.loads(r.read())
        if body.get("upstreams", {}).get(upstream, {}).get("state") == "ready":
            return body
        time.sleep(0.1)
    raise TimeoutError(f"upstream {upstream} not ready: {body}")


def _healthz(port: int) -> Any:
    """/healthz with the owner's token: the details (upstreams, storage, causes) are for authenticated
    callers."""
    import urllib.request

    return urllib.request.Request(f"http://127.0.0.1:{port}/healthz", headers=AUTH)


def public_health(port: int) -> dict[str, Any]:
    """/healthz as a caller without a token sees it."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        return json.loads(e.read())


def health(port: int) -> dict[str, Any]:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(_healthz(port), timeout=10) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        return json.loads(e.read())


def tree(pid: int) -> set[int]:
    return {pid} | descendants(pid)


def kill_tree(proc: subprocess.Popen) -> None:
    """Test cleanup only: whatever is left of the gateway's tree."""
    pids = tree(proc.pid)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        pass


def wait_gone(pids: set[int], timeout: float = 10.0) -> set[int]:
    deadline = time.monotonic() + timeout
    left = {p for p in pids if alive(p)}
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = {p for p in left if alive(p)}
    return left


def executed(tmp: Path) -> list[str]:
    log = tmp / "executed.log"
    return log.read_text().split() if log.exists() else []


def audit_rows(store: Path) -> list[dict[str, Any]]:
    """Every audit row of the store at ``store``: its own file and every gateway instance's, by time."""
    import sqlite3

    from sentinel_mcp.gateway.audit import audit_files
    from sentinel_mcp.storage.snapshot import read_connection

    rows: list[dict[str, Any]] = []
    with _copies_without_waiting():
        for db in audit_files(store):
            with read_connection(db) as conn:
                conn.row_factory = sqlite3.Row
                rows += [dict(r) for r in conn.execute("SELECT * FROM audit ORDER BY id")]
    return sorted(rows, key=lambda r: r["ts"])


@contextmanager
def _copies_without_waiting() -> Iterator[None]:
    """A test's read of a live gateway's store takes its copy at once, without the reader's wait (0.1 s a
    read, hundreds of reads in the front suites). The wait is there so a writer under load keeps its log
    whole while a copy is taken; the gateways here are idle when the test reads (the answer was given), and a
    copy torn all the same is seen by ``wal_generation`` and taken again (``snapshot.readable_copy``): a read
    may be retried, never read wrong. ``test_verify_while_writing.py`` keeps the wait under load."""
    import sentinel_mcp.storage.copy_hold as copy_hold

    wait = copy_hold.READER_WAIT_S
    copy_hold.READER_WAIT_S = 0.0
    try:
        yield
    finally:
        copy_hold.READER_WAIT_S = wait


def instance_audit_file(store: Path, timeout: float = 10.0) -> Path:
    """The one live gateway instance's own audit log under the store's directory."""
    from sentinel_mcp.storage.instances import instance_dirs, is_live

    deadline = time.monotonic() + timeout
    while True:
        live = [
            d / store.name for d in instance_dirs(store.parent) if is_live(d) and (d / store.name).exists()
        ]
        if len(live) == 1 or time.monotonic() > deadline:
            assert len(live) == 1, live
            return live[0]
        time.sleep(0.05)
