"""The fork server for test upstreams (tests/support/fork_server.py, fork_launcher.py): a script started
through it must look, to the process that started it, like the script started directly: what it was given,
its pipes and their EOF, its exit, the signals sent to it, its death with the launcher. And when the server
is not there, the launcher is the ordinary start."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import forked_upstreams
from tests.support.forked_upstreams import LAUNCHER, SERVER, orphans

PROBE = str(Path(__file__).with_name("forked_probe.py"))
ROOT = Path(__file__).resolve().parent.parent.parent
TOOLBOX = str(Path(__file__).with_name("toolbox_server.py"))


def _looks(condition, looks: int = 3000) -> bool:
    for _ in range(looks):
        if condition():
            return True
        time.sleep(0.01)
    return False


@pytest.fixture
def server(tmp_path: Path):
    """A fork server of the test's own (the worker's is shared with the other tests)."""
    sock = str(tmp_path / "s")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.Popen([sys.executable, SERVER, sock], stdin=subprocess.PIPE, env=env, cwd="/")
    assert _looks(lambda: os.path.exists(sock))
    yield proc, sock
    proc.stdin.close()  # type: ignore[union-attr]
    proc.wait()


def _alive(pid: int) -> bool:
    return forked_upstreams._alive(pid)


def _env(**extra: str) -> dict[str, str]:
    """What the gateway hands an upstream (the SDK's few variables, and the config's)."""
    return {k: os.environ[k] for k in ("HOME", "PATH") if k in os.environ} | extra


def _run(command: list[str], **kw) -> tuple[int, dict, str, dict]:
    proc = subprocess.run(command, input="line one\nline two", capture_output=True, text=True, **kw)
    lines = proc.stdout.splitlines()
    return proc.returncode, json.loads(lines[0]), proc.stderr, json.loads(lines[1])


def test_a_forked_script_sees_what_a_direct_start_gives_it(server, tmp_path: Path) -> None:
    _, sock = server
    env = _env(CODE="3", ODD="a b\tc", PYTHONPATH=str(tmp_path))
    direct = _run([sys.executable, PROBE, "show", "x y"], env=env, cwd=tmp_path)
    forked = _run([sys.executable, "-I", "-S", LAUNCHER, sock, PROBE, "show", "x y"], env=env, cwd=tmp_path)
    assert forked[3]["warm"] and not direct[3]["warm"]  # it was the fork indeed
    assert forked[0] == direct[0] == 3
    assert forked[1] == direct[1]
    assert forked[2] == direct[2] == "to stderr\n"
    assert forked[3]["stdin"] == direct[3]["stdin"] == "line one\nline two"


def test_a_module_run_with_dash_m_sees_the_same(server) -> None:
    _, sock = server
    env = _env()
    direct = _run([sys.executable, "-m", "tests.gateway.forked_probe", "show"], env=env, cwd=ROOT)
    forked = _run([sys.executable, "-I", "-S", LAUNCHER, sock, "-m", "tests.gateway.forked_probe", "show"],
                  env=env, cwd=ROOT)
    assert forked[3]["warm"]
    assert forked[:3] == direct[:3]


def test_a_child_killed_by_a_signal_kills_its_launcher_with_it(server) -> None:
    _, sock = server
    proc = subprocess.run([sys.executable, "-I", "-S", LAUNCHER, sock, PROBE, "die"], env=_env(),
                          capture_output=True)
    assert proc.returncode == -signal.SIGUSR1


def _launched(sock: str, how: str, **kw) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-I", "-S", LAUNCHER, sock, PROBE, how], env=_env(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, **kw)
    return proc, int(proc.stdout.readline())  # type: ignore[union-attr]


def test_the_launchers_death_is_the_childs(server) -> None:
    srv, sock = server
    proc, child = _launched(sock, "sleep")
    assert child != proc.pid and _alive(child)
    proc.kill()
    assert proc.wait() == -signal.SIGKILL
    assert _looks(lambda: not _alive(child))
    assert _looks(lambda: not orphans(srv.pid))


def test_sigterm_to_the_launcher_reaches_the_child(server) -> None:
    _, sock = server
    proc, child = _launched(sock, "term")
    proc.send_signal(signal.SIGTERM)
    assert proc.stdout.read() == "term\n"  # type: ignore[union-attr]
    assert proc.wait() == 7
    assert _looks(lambda: not _alive(child))


def test_a_killed_group_is_the_childs_too(server) -> None:
    """The gateway starts an upstream as a group's leader and kills the group (upstream_session.py)."""
    _, sock = server
    proc, child = _launched(sock, "term", process_group=0)
    assert os.getpgid(child) == proc.pid
    os.killpg(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    assert _looks(lambda: not _alive(child))


def test_stdout_closed_by_the_child_is_eof_while_it_runs(server) -> None:
    _, sock = server
    proc, child = _launched(sock, "close")
    assert proc.stdout.read() == ""  # type: ignore[union-attr]
    assert _alive(child) and proc.poll() is None
    proc.kill()
    proc.wait()
    assert _looks(lambda: not _alive(child))


def test_with_no_server_the_launcher_starts_the_script_itself(server, tmp_path: Path) -> None:
    srv, sock = server
    srv.kill()
    srv.wait()
    for where in (sock, str(tmp_path / "never")):
        code, shown, err, rest = _run([sys.executable, "-I", "-S", LAUNCHER, where, PROBE, "show"],
                                      env=_env(CODE="5"), cwd=tmp_path)
        assert (code, err, rest["warm"], shown["argv"]) == (5, "to stderr\n", False, [PROBE, "show"])


def test_an_interpreter_variable_is_refused_and_run_by_exec(server, tmp_path: Path) -> None:
    _, sock = server
    code, shown, _, rest = _run([sys.executable, "-I", "-S", LAUNCHER, sock, PROBE, "show"],
                                env=_env(PYTHONUNBUFFERED="1"), cwd=tmp_path)
    assert code == 0 and not rest["warm"] and shown["env"]["PYTHONUNBUFFERED"] == "1"


def test_many_launches_at_once_each_get_their_own(server, tmp_path: Path) -> None:
    srv, sock = server
    procs = [subprocess.Popen([sys.executable, "-I", "-S", LAUNCHER, sock, PROBE, "show", str(i)],
                              env=_env(CODE=str(i)), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=tmp_path) for i in range(24)]
    for i, proc in enumerate(procs):
        out, err = proc.communicate(f"for {i}")
        shown, rest = (json.loads(line) for line in out.splitlines())
        assert (proc.returncode, shown["argv"][2], err) == (i, str(i), "to stderr\n")
        assert rest == {"stdin": f"for {i}", "warm": True}
    assert _looks(lambda: not forked_upstreams._children(srv.pid))


def _exchange(command: list[str]) -> list[dict]:
    """An MCP client's first exchange with a stdio upstream, its answers as read (ids, versions, tools)."""
    asks = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "ab", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo",
                                                                          "arguments": {"text": "hi"}}}]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=_env(),
                            cwd=ROOT)
    answers = []
    for ask in asks:  # each answer read before the next ask: stdin's EOF would end the server
        proc.stdin.write(json.dumps(ask) + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        if "id" in ask:
            answers.append(json.loads(proc.stdout.readline()))  # type: ignore[union-attr]
    proc.stdin.close()  # type: ignore[union-attr]
    rest = proc.stdout.read()  # type: ignore[union-attr]
    return [*answers, {"rest": rest, "rc": proc.wait()}]


def test_a_test_upstream_answers_the_same_either_way(server) -> None:
    _, sock = server
    direct = _exchange([sys.executable, TOOLBOX])
    forked = _exchange([sys.executable, "-I", "-S", LAUNCHER, sock, TOOLBOX])
    assert direct[-1] == {"rest": "", "rc": 0} and direct[2]["result"]["content"][0]["text"] == "hi"
    assert forked == direct


def test_forked_leaves_other_commands_and_obeys_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    assert forked_upstreams.forked(["node", "x.js"]) == ["node", "x.js"]
    monkeypatch.setenv("SENTINEL_TEST_FORK", "0")
    assert forked_upstreams.forked([sys.executable, PROBE]) == [sys.executable, PROBE]
    monkeypatch.delenv("SENTINEL_TEST_FORK")
    assert forked_upstreams.forked([sys.executable, PROBE])[:4] == [sys.executable, "-I", "-S", LAUNCHER]
