"""Where a stdio upstream is started (issue 21, the upstream's CPU a call behind the gateway): in a process
group of its own always (the gateway and the SDK kill it by that group), in a session of its own only when
the gateway has a controlling terminal, so that the upstream can never reach it (no ``/dev/tty``, no
``TIOCSTI`` keystrokes into the user's shell). Without a terminal there is nothing for a session to keep
it from, and a session of its own costs it: Linux's scheduler puts every session in a group of its own
(``sched_autogroup``), and the upstream, alone in its group, waited ~2-3 ms on a run queue a call and took
~1.7x the CPU a call on the shared test machine (``benchmarks/harness/upstream_call_counts.py cpu``).

Real gateways (``serve`` over stdio, in subprocesses), a real upstream that reports where it runs and then
serves the test toolbox."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.timeout(120), pytest.mark.skipif(sys.platform == "win32", reason="POSIX sessions")]

ROOT = Path(__file__).resolve().parents[2]
PROBE = str(Path(__file__).with_name("session_probe_upstream.py"))


def _gateway(tmp_path: Path, **popen: Any) -> tuple[subprocess.Popen[bytes], Path]:
    out = tmp_path / "probe.json"
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [PROBE, str(out)]}},
                               "sentinel": {"data_dir": str(tmp_path / "state"), "builtins": []}}))
    cfg.chmod(0o600)
    proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve"], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, **popen)
    return proc, out


def _probe(proc: subprocess.Popen[bytes], out: Path) -> dict[str, Any]:
    for _ in range(6000):
        if out.exists():
            return json.loads(out.read_text())  # type: ignore[no-any-return]
        assert proc.poll() is None, "the gateway ended before its upstream started"
        time.sleep(0.01)
    raise AssertionError("the upstream never started")


def _listed(proc: subprocess.Popen[bytes]) -> list[str]:
    assert proc.stdin is not None and proc.stdout is not None
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                                 "params": {"_meta": meta}}).encode() + b"\n")
    proc.stdin.flush()
    while True:
        answer = json.loads(proc.stdout.readline())
        if answer.get("id") == 1:
            return [t["name"] for t in answer["result"]["tools"]]


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def _group_gone(pgid: int) -> bool:
    for _ in range(1000):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.01)
    return False


def test_without_a_terminal_the_upstream_shares_the_gateways_session_in_a_group_of_its_own(
    tmp_path: Path,
) -> None:
    proc, out = _gateway(tmp_path, start_new_session=True)  # a session with no controlling terminal
    try:
        probe = _probe(proc, out)
        assert "tb__noop" in _listed(proc)  # it serves as before
        reaper = probe["ppid"]  # every upstream runs under the reaper, which leads its process group
        assert probe["sid"] == os.getsid(proc.pid), "no terminal: the upstream stays in the gateway's session"
        assert probe["pgid"] == reaper != os.getpgid(proc.pid), "a group of its own, led by its reaper"
        assert probe["tty"] == "ENXIO", "no controlling terminal reachable"
    finally:
        _stop(proc)
    assert _group_gone(probe["pgid"]), "the upstream's group ends with the gateway"


def test_with_a_terminal_the_upstream_gets_a_session_of_its_own_and_cannot_reach_the_terminal(
    tmp_path: Path,
) -> None:
    master, slave = pty.openpty()
    name = os.ttyname(slave)
    os.close(slave)

    def take_terminal() -> None:  # after setsid: opening the tty makes it the gateway's controlling terminal
        os.close(os.open(name, os.O_RDWR))

    try:
        proc, out = _gateway(tmp_path, start_new_session=True, preexec_fn=take_terminal)
        try:
            probe = _probe(proc, out)
            assert "tb__noop" in _listed(proc)
            assert probe["sid"] != os.getsid(proc.pid), "a terminal: the upstream gets a session of its own"
            assert probe["pgid"] == probe["ppid"] == probe["sid"], "led by its reaper"
            assert probe["tty"] == "ENXIO", "the gateway's terminal is out of the upstream's reach"
        finally:
            _stop(proc)
        assert _group_gone(probe["pgid"])
    finally:
        os.close(master)


def test_a_controlling_terminal_is_seen_and_any_doubt_counts_as_one(tmp_path: Path) -> None:
    """``spawn_options`` in a process with a terminal, without one, and when ``/dev/tty`` cannot be opened for
    another reason than "no terminal" (the safe side: a session of its own)."""
    from sentinel_mcp.gateway import upstream_session

    code = ("import json,sys; from sentinel_mcp.gateway import upstream_session as u; "
            "print(json.dumps(u.spawn_options()))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, check=True,
                           start_new_session=True, stdin=subprocess.DEVNULL)
    assert json.loads(plain.stdout) == {"process_group": 0}
    pid, fd = pty.fork()
    if pid == 0:  # the child: a session led by it, the pty its controlling terminal
        os.execve(sys.executable, [sys.executable, "-c", code], env)
    text = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        text += chunk
    os.waitpid(pid, 0)
    os.close(fd)
    assert json.loads(text.decode().strip().splitlines()[-1]) == {"start_new_session": True}
    for errno_name in ("EACCES", "EIO", "ENOENT"):
        assert upstream_session.options_after(OSError(getattr(__import__("errno"), errno_name), "x")) == {
            "start_new_session": True}, errno_name


async def test_an_upstream_the_sdk_spawns_in_process_is_placed_the_same_way(tmp_path: Path) -> None:
    """The spawn hook's own path (not launched early): the same session rule, whatever terminal the test
    process has."""
    from sentinel_mcp.app.runtime import running_gateway
    from sentinel_mcp.gateway import upstream_session

    from .helpers import make_config

    out = tmp_path / "probe.json"
    cfg = make_config(tmp_path / "data", {"tb": {"command": sys.executable, "args": [PROBE, str(out)]}},
                      builtins=[])
    async with running_gateway(cfg) as rt:
        assert rt.manager.upstreams["tb"].state == "ready"
        probe = json.loads(out.read_text())
    shared = upstream_session.spawn_options() == {"process_group": 0}
    assert (probe["sid"] == os.getsid(0)) is shared
    assert probe["pgid"] == probe["ppid"] != os.getpgrp()
    assert probe["tty"] == "ENXIO"
    assert _group_gone(probe["pgid"])


async def test_a_backend_that_takes_no_process_group_gets_a_session_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The safe side when anyio's backend will not pass ``process_group`` on: the old spawn, a new session."""
    from sentinel_mcp.gateway import upstream_session

    class Strict:
        async def open_process(self, command: Any, *, stdin: Any, stdout: Any, stderr: Any, cwd: Any = None,
                               env: Any = None, start_new_session: bool = False) -> Any:
            raise AssertionError("not reached: the signature refuses process_group first")

    monkeypatch.setattr(upstream_session, "get_async_backend", lambda: Strict())
    monkeypatch.setattr(upstream_session, "spawn_options", lambda: {"process_group": 0})
    code = "import os; print(os.getsid(0), os.getpgrp(), os.getpid())"
    argv = [sys.executable, "-c", code]
    process = await upstream_session.open_upstream(argv, None, subprocess.DEVNULL, None)
    async with process:
        assert process.stdout is not None
        out = b""
        async for chunk in process.stdout:
            out += chunk
        await process.wait()
    sid, pgid, pid = map(int, out.split())
    assert sid == pgid == pid != os.getsid(0)
