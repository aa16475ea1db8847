"""``make cluster`` as a user runs it (``python -m examples.cluster DIR``, what the Makefile target runs): it
starts PostgreSQL in DIR (as the ``postgres`` user when run as root), two replicas and haproxy, and prints
where to connect; the real ``mcp`` client makes a guarded call through the balancer, answering Sentinel's
questions; Ctrl-C (SIGINT to its process group, twice, as an impatient person does) stops everything it
started: no replica, upstream, haproxy or PostgreSQL process is left; a second start on the same DIR reuses
its database, token and seal key."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult

from tests.records.rig import ROOT

pytestmark = pytest.mark.timeout(300)


def processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every process now."""
    found: dict[int, tuple[int, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        found[int(entry.name)] = (ppid, cmd)
    return found


def started_by(root: Path, leader: int) -> set[int]:
    """The recipe's process and everything it started: children of it, and processes naming ``root``
    (PostgreSQL is a daemon, haproxy and the replicas run in their own sessions), with their children."""
    procs = processes()
    mine = {leader} | {pid for pid, (_, cmd) in procs.items() if str(root) in cmd}
    while True:
        more = {pid for pid, (ppid, _) in procs.items() if ppid in mine} - mine
        if not more:
            return mine
        mine |= more


def alive(pids: set[int]) -> set[int]:
    now = processes()
    return {p for p in pids if p in now and not now[p][1] == ""}  # zombies have an empty command line


def start(root: Path) -> tuple[subprocess.Popen, dict[str, str]]:
    # as from a terminal: a Ctrl-C is heard, even when this test runs where SIGINT is ignored (a shell's
    # background job inherits SIG_IGN, and Python keeps an ignored SIGINT ignored)
    proc = subprocess.Popen([sys.executable, "-m", "examples.cluster", str(root)], cwd=ROOT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    assert proc.stdout is not None
    shown: dict[str, str] = {}
    for line in proc.stdout:  # bounded: the process ends (an error) or says it is up
        if m := re.search(r"connect MCP clients to (http://\S+)", line):
            shown["url"] = m.group(1)
        if m := re.search(r"token:\s+(\S+)", line):
            shown["token"] = m.group(1)
        if m := re.search(r"commands: (.+?)   \(", line):
            shown["commands"] = m.group(1)
        if "stop with Ctrl-C" in line:
            return proc, shown
    raise AssertionError(f"the cluster did not start (exit {proc.wait()})")


def ctrl_c_twice(proc: subprocess.Popen) -> str:
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGINT)  # impatient: again while it stops
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    return out


async def guarded_call(url: str, token: str) -> str:
    asked: list[str] = []

    async def answer(ctx: object, params: object) -> ElicitResult:
        message = getattr(params, "message", "")
        asked.append(message)
        if "user id" in message:
            return ElicitResult(action="accept", content={"answer": "chen_jackson_3290"})
        if "Why" in message:
            return ElicitResult(action="accept", content={"answer": "change_of_plan"})
        schema = str(getattr(params, "requested_schema", ""))  # the policy's confirmation or the default's
        return ElicitResult(action="accept", content={"approve" if "approve" in schema else "answer": True})

    async with (
        httpx2.AsyncClient(timeout=60, headers={"Authorization": f"Bearer {token}"}) as http,
        Client(
            streamable_http_client(url, http_client=http), mode="legacy", elicitation_callback=answer
        ) as c,
    ):
        r = await c.call_tool("airline__cancel_reservation", {"reservation_id": "4WQ150"})
        assert not r.is_error and len(asked) == 3, (r.content, asked)  # user id, reason, confirmation
        return r.content[0].text


async def test_make_cluster_serves_through_the_balancer_and_ctrl_c_leaves_nothing_running() -> None:
    root = Path(tempfile.mkdtemp(prefix="sentinel-make-cluster-"))
    proc, shown = start(root)
    try:
        assert shown.keys() == {"url", "token", "commands"}, shown
        assert '"status": "cancelled"' in await guarded_call(shown["url"], shown["token"])
        # the banner's command line for the CLI, pasted into a shell as printed (this checkout's program):
        # the replica's config needs the seal key from the environment, which the line sets
        pasted = shown["commands"].replace("sentinel-mcp ", f"{sys.executable} -m sentinel_mcp ", 1)
        verify = subprocess.run(["bash", "-c", pasted], capture_output=True, text=True, timeout=120,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert verify.returncode == 0 and "intact" in verify.stdout, (verify.stdout, verify.stderr)
        ours = started_by(root, proc.pid)
        assert len(ours) >= 6, ours  # the recipe, PostgreSQL, 2 replicas and their upstreams, haproxy
        out = ctrl_c_twice(proc)
        assert "stopped" in out and "Traceback" not in out, out
        assert alive(ours) == set(), [processes().get(p) for p in alive(ours)]

        again, shown_again = start(root)  # the same data dir: the same database, token and seal key
        proc = again
        assert shown_again["token"] == shown["token"]
        ours = started_by(root, again.pid)
        ctrl_c_twice(again)
        assert alive(ours) == set(), [processes().get(p) for p in alive(ours)]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            proc.communicate(timeout=120)
