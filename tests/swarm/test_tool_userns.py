"""A gateway not run as root gives its tools the namespaces through a user namespace of their own.

Found by red team 'swarm' 6: not root, the gateway gave its tools the socket filter only. A tool (hostile
code) shared the machine's network namespace, saw every process of the machine in /proc (the gateway's among
them), and read and wrote the machine's /tmp (what another tool, or another user, left there world-readable).
Now, where the machine lets an unprivileged user make a user namespace, each tool has one of its own and, in
it, the root gateway's network, mount, IPC and pid namespaces (``tool_userns.py``). The gateway here is the
toolchain run as ``nobody`` (``setpriv``)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.swarm.support.tool_processes import (
    KOTLIN,
    TOOL_PYTHON,
    alive,
    all_gone,
    kill_all,
    record_sh,
    recorded,
)

_NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
_USERNS = str(Path(__file__).parents[2] / "sentinel_mcp" / "swarm" / "tool_userns.py")

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv"),
]


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory ``nobody`` reaches (pytest's own are root's only), removed after."""
    d = Path(tempfile.mkdtemp(prefix="sentinel-userns-"))
    d.chmod(0o1777)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _as_nobody(
    d: Path,
    tool: str | None,
    first: str = "",
    home: Path | None = None,
    java: str | None = None,
    caps: str = "max_memory_mb=512",
) -> dict[str, list[str]]:
    """The toolchain run by a gateway that is ``nobody``, its ``java`` the script ``tool``: its report's
    notes and issues, and what it says of this machine (``first``: code the gateway runs before it starts;
    ``home``: its HOME; ``java``: a real one, ``tool`` None, its ktlint the jar ``d/ktlint`` made already;
    ``caps``: its settings')."""
    if tool is not None:
        (d / "java").write_text(tool)
        (d / "java").chmod(0o755)
        (d / "ktlint").write_text("not a jar\n")
    runner = (
        # the supervisor and the probes run with the standard library only: this machine's Python, which
        # nobody reaches (the tests' own lives under root's home)
        f"import asyncio, json, sys\nsys.executable = {TOOL_PYTHON!r}\n{first}"
        "from sentinel_mcp.swarm.toolchain import Toolchain, VerifySettings\n"
        f"s = VerifySettings(kotlin=True, resources=False, java={java or str(d / 'java')!r}, "
        f"ktlint={str(d / 'ktlint')!r}, {caps})\nt = Toolchain(s)\n"
        f"r = asyncio.run(t.check_kotlin({KOTLIN!r}))\n"
        "issues = [i.message for i in r.issues]\n"
        "print(json.dumps({'notes': r.notes, 'issues': issues, 'said': t.describe()}))\n"
    )
    ran = subprocess.run(
        [*_NOBODY, sys.executable, "-c", runner],
        env=dict(os.environ, PYTHONPATH=str(Path(__file__).parents[2]), HOME=str(home or os.environ["HOME"])),
        cwd=d,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    return json.loads(ran.stdout.splitlines()[-1])


def _userns_here() -> bool:
    ran = subprocess.run([*_NOBODY, TOOL_PYTHON, "-I", "-S", _USERNS], cwd="/tmp", capture_output=True)
    return ran.returncode == 0


_ATTACKS = {
    "its network is the machine's": "broke(os.readlink('/proc/self/ns/net') == HOST_NET)",
    "list /proc: the test's (root's) process is there": "broke(str(ROOT_PID) in os.listdir('/proc'))",
    "count the machine's processes": "broke(sum(n.isdigit() for n in os.listdir('/proc')) > 8)",
    "read what was left world-readable in the machine's /tmp": "broke(open(PLANTED).read() == 'left')",
    "leave a file in the machine's /tmp": "open(f'/tmp/{MARK}-from-tool', 'w').write('x')\nbroke(False)",
    # red team 'swarm' 7: its init (the supervisor's fork, its uid) showed the supervisor's arguments
    "read its init's command line": "broke(len(open('/proc/1/cmdline', 'rb').read()) > 0)",
    "read its init's environment": "broke(len(open('/proc/1/environ', 'rb').read()) > 0)",
    # and its /dev was the machine's (red team 'swarm' 7): a terminal of the machine's, FUSE
    "open a terminal of the machine's": "broke(os.open('/dev/ptmx', os.O_RDWR) >= 0)",
    "open FUSE": "broke(os.open('/dev/fuse', os.O_RDWR) >= 0)",
}


@pytest.mark.parametrize("attack", list(_ATTACKS))
def test_a_non_root_gateways_tool_is_separated_where_user_namespaces_are_allowed(open_dir, attack) -> None:
    if not _userns_here():
        pytest.skip("this machine refuses unprivileged user namespaces")
    mark = f"sentinel-userns-{uuid.uuid4().hex}"
    planted = Path("/tmp") / f"{mark}-planted"
    planted.write_text("left")
    planted.chmod(0o644)
    body = "    " + _ATTACKS[attack].replace("\n", "\n    ")
    tool = (
        f"#!{TOOL_PYTHON}\nimport os, sys\n"
        f"HOST_NET, ROOT_PID, PLANTED, MARK = {os.readlink('/proc/self/ns/net')!r}, {os.getpid()}, "
        f"{str(planted)!r}, {mark!r}\n"
        "def broke(reached):\n    print('BROKE' if reached else 'refused:')\n"
        f"try:\n{body}\nexcept OSError as e:\n    print('refused:', type(e).__name__)\n"
        "print('uid', os.getuid())\nsys.exit(1)\n"
    )
    try:
        got = _as_nobody(open_dir, tool)
    finally:
        planted.unlink()
        with contextlib.suppress(FileNotFoundError):
            (Path("/tmp") / f"{mark}-from-tool").unlink()
            pytest.fail("the tool wrote in the machine's /tmp")
    ran = " ".join(got["notes"])
    assert "refused:" in ran and "BROKE" not in ran, ran
    assert "uid 1000" in ran, ran  # its uid in its own user namespace
    assert any(n.startswith("each tool in a user namespace of its own") for n in got["said"]), got["said"]


# the files a gateway keeps of its own (all its user's, owner-only), under its home
_GATEWAY_FILES = {
    "its data dir's audit database": "data/audit.db",
    "its config (secrets in it)": "sentinel.toml",
    "its TLS key": "tls/key.pem",
    "its ~/.config": ".config/sentinel/token",
}


@pytest.fixture
def gateway_home() -> Iterator[Path]:
    """A home of ``nobody``'s (the gateway's user) outside the places a tool is given of its own (/tmp), with
    the gateway's files in it, each owner-only; removed after."""
    home = Path("/home") / f"sentinel-gateway-{uuid.uuid4().hex}"
    try:
        for rel in _GATEWAY_FILES.values():
            f = home / rel
            f.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            f.write_text("gateway-secret")
            f.chmod(0o600)
        for top, dirs, files in os.walk(home):
            for name in (*dirs, *files, ""):
                os.chown(os.path.join(top, name), 65534, 65534)
        home.chmod(0o700)
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.parametrize("attack", list(_GATEWAY_FILES))
def test_a_non_root_gateways_tool_cannot_read_the_gateways_own_files(open_dir, gateway_home, attack) -> None:
    """Found by red team 'swarm' 7: in its user namespace the tool is the gateway's uid outside it, and its
    view of the files was the machine's (read-only): every file the gateway owns (its data dir, config, TLS
    key, audit database, ~/.config) it read. Now its view has the machine's system directories only (and
    its workspace, its program's, its own /tmp): the gateway's home is not in it."""
    if not _userns_here():
        pytest.skip("this machine refuses unprivileged user namespaces")
    target = gateway_home / _GATEWAY_FILES[attack]
    tool = (
        f"#!{TOOL_PYTHON}\nimport os, sys\ntry:\n"
        f"    print('BROKE' if open({str(target)!r}).read() == 'gateway-secret' else 'refused:')\n"
        "except OSError as e:\n    print('refused:', type(e).__name__)\n"
        f"print('home', os.path.exists({str(gateway_home)!r}))\nsys.exit(1)\n"
    )
    got = _as_nobody(open_dir, tool, home=gateway_home)
    ran = " ".join(got["notes"])
    assert "refused:" in ran and "BROKE" not in ran and "home False" in ran, ran


@pytest.mark.skipif(not (shutil.which("java") and shutil.which("javac")), reason="no JDK here")
def test_a_non_root_gateways_real_jvm_still_runs_in_its_view_of_the_files(open_dir, gateway_home) -> None:
    """The honest tool: a JVM (the machine's, under /usr) reads the sources it is given in its workspace and
    answers, in the view that lacks the gateway's home."""
    if not _userns_here():
        pytest.skip("this machine refuses unprivileged user namespaces")
    (open_dir / "Lint.java").write_text(
        "public class Lint { public static void main(String[] a) throws Exception {\n"
        "  String s = java.nio.file.Files.readString(java.nio.file.Path.of(a[a.length - 1]));\n"
        '  System.out.println("[{\\"file\\": \\"" + a[a.length - 1] + "\\", \\"errors\\": [{\\"line\\": 1, '
        '\\"column\\": 1, \\"rule\\": \\"\\", \\"message\\": \\"read " + s.length() + "\\"}]}]"); } }\n'
    )
    classes = open_dir / "classes"
    subprocess.run(["javac", "-d", str(classes), str(open_dir / "Lint.java")], check=True)
    jar = ["jar", "--create", "--file", str(open_dir / "ktlint"), "--main-class", "Lint", "-C", str(classes)]
    subprocess.run([*jar, "."], check=True)
    (open_dir / "ktlint").chmod(0o644)
    got = _as_nobody(open_dir, None, home=gateway_home, java=shutil.which("java"))
    source = KOTLIN["app/src/main/java/com/example/A.kt"]
    assert got["notes"] == [] and [i for i in got["issues"] if f"read {len(source)}" in i], got


def test_a_non_root_gateways_tool_cannot_fork_past_its_process_cap(open_dir) -> None:
    """Red team 'swarm' 7: a gateway not root is given no cgroup for its tools (here: none of this test's
    processes may make one), so nothing capped a tool's processes: a fork bomb ran to the machine's limit.
    In its user namespace its processes (and threads) are now counted apart from the gateway user's others,
    and capped there (``RLIMIT_NPROC``)."""
    if not _userns_here():
        pytest.skip("this machine refuses unprivileged user namespaces")
    tool = (
        f"#!{TOOL_PYTHON}\nimport os, signal, sys\nr, w = os.pipe()\nkids = []\ntry:\n"
        "    for _ in range(100):\n        pid = os.fork()\n        if pid == 0:\n"
        "            os.close(w)\n            os.read(r, 1)\n            os._exit(0)\n"
        "        kids.append(pid)\nexcept OSError as e:\n    print(type(e).__name__)\n"
        "print('forked', len(kids))\nos.close(w)\nfor pid in kids:\n    os.waitpid(pid, 0)\nsys.exit(1)\n"
    )
    got = _as_nobody(open_dir, tool, caps="max_processes=32")
    ran = " ".join(got["notes"])
    assert "forked" in ran and "forked 100" not in ran, ran
    said = " ".join(got["said"])
    assert "processes and threads are capped to 32 in its user namespace" in said, said


def test_a_non_root_gateway_refused_user_namespaces_says_what_its_tools_share(open_dir) -> None:
    """A machine that refuses unprivileged user namespaces (here: the gateway itself behind the tools' own
    filter, which refuses ``unshare``): its tools still run, with the socket filter, and the report says what
    they are not separated from."""
    tool = f"#!{TOOL_PYTHON}\nimport os, sys\nprint(os.readlink('/proc/self/ns/net'), os.getuid())\n"
    tool += "sys.exit(1)\n"
    (open_dir / "seal.py").write_text(
        "import ctypes, importlib.util\n"
        "ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)\n"  # no_new_privs: what the filter needs, unprivileged
        f"spec = importlib.util.spec_from_file_location('n', {_USERNS.replace('userns', 'network')!r})\n"
        "n = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(n)\nn.seal()\n"
    )
    got = _as_nobody(open_dir, tool, first=f"exec(open({str(open_dir / 'seal.py')!r}).read())\n")
    ran = " ".join(got["notes"])
    assert f"{os.readlink('/proc/self/ns/net')} 65534" in ran, ran  # run: the machine's network, its uid
    said = " ".join(got["said"])
    assert "no user namespace for the tools" in said and "every process's view in /proc" in said, said
    assert "see every process of the machine" in said and "share the machine's /tmp" in said, said
    # and its files: the tool is its user, in the machine's view
    assert "every file of the machine's their user may read" in said and "its files" in said, said


def test_nothing_a_non_root_gateways_tool_started_outlives_the_gateway(open_dir) -> None:
    """The gateway (not root) killed (kill -9) while its tool runs in its user namespace: neither the tool nor
    what it started is left (taking the namespace clears the supervisor's tie to the gateway: made again)."""
    if not _userns_here():
        pytest.skip("this machine refuses unprivileged user namespaces")
    pids = open_dir / "pids"
    (open_dir / "java").write_text(
        f"#!/bin/sh\n{record_sh(pids)}\nsleep 600 &\n{record_sh(pids, '$!')}\nwait\n"
    )
    (open_dir / "java").chmod(0o755)
    (open_dir / "ktlint").write_text("not a jar\n")
    runner = (
        f"import asyncio, sys\nsys.executable = {TOOL_PYTHON!r}\n"
        "from sentinel_mcp.swarm.toolchain import Toolchain, VerifySettings\n"
        f"s = VerifySettings(kotlin=True, resources=False, java={str(open_dir / 'java')!r}, "
        f"ktlint={str(open_dir / 'ktlint')!r}, timeout=900)\n"
        f"asyncio.run(Toolchain(s).check_kotlin({KOTLIN!r}, within=600.0))\n"
    )
    gateway = subprocess.Popen(
        [*_NOBODY, sys.executable, "-c", runner],
        env=dict(os.environ, PYTHONPATH=str(Path(__file__).parents[2])),
        cwd=open_dir,
    )
    started = []
    try:
        for _ in range(3000):  # bounded by count: until the tool and its child have started
            started = recorded(pids)
            if len(started) == 2 or gateway.poll() is not None:
                break
            time.sleep(0.01)
        assert len(started) == 2, gateway.poll()
        gateway.kill()
        gateway.wait(30)
        assert all_gone(started, looks=1000), [p for p in started if alive(p)]
    finally:
        gateway.kill()
        kill_all(recorded(pids))
