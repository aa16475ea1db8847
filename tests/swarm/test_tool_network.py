"""A verification tool has no network: no socket to the gateway's ports, the machine's unix sockets, or away.

Found by red team 'swarm' 4: a tool (what parses the models' hostile output, or runs a build step's plugins)
could open sockets: reach a port on 127.0.0.1 (the gateway's HTTP port, its console), a world-connectable unix
socket (PostgreSQL's), send a UDP packet, or carry the generated sources away. Now its first process installs
a seccomp filter (``socket()`` refused, kept by all it starts) and, with a root gateway, takes a network
namespace of its own. Each attack below is a stand-in ``java`` that tries it and prints BROKE when it worked;
the listener the test holds is then looked at, after the tool has ended, for what reached it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.swarm.support.tool_processes import KOTLIN, TOOL_PYTHON, script_tools

from sentinel_mcp.swarm.tool_network import filter_here, namespaces_here

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.usefixtures("tools_reach_tmp_path"),
    pytest.mark.skipif(not filter_here(), reason="no socket filter for this machine"),
]

_ATTACKS = {
    "connect to a port on 127.0.0.1": "s = socket.create_connection(('127.0.0.1', TCP), 5)\n"
    "s.sendall(b'src')",
    "connect to a unix socket in /tmp": "s = socket.socket(socket.AF_UNIX)\ns.connect(UNIX)\n"
    "s.sendall(b'src')",
    "connect to an abstract unix socket": "s = socket.socket(socket.AF_UNIX)\ns.connect(ABSTRACT)",
    "send a UDP packet to 127.0.0.1": "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "s.sendto(b'src', ('127.0.0.1', UDP))",
    # the cloud's metadata address, the internet, a raw or netlink socket: none can even be opened
    "open a socket of any family": "for f in (socket.AF_INET, socket.AF_INET6, socket.AF_UNIX,\n"
    "          socket.AF_NETLINK):\n"
    "    try:\n        socket.socket(f, socket.SOCK_DGRAM)\n        print('BROKE', f)\n"
    "    except OSError:\n        pass\nraise OSError",
    # an io_uring's operations open and connect sockets without the socket() call
    "set up an io_uring": "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    "if libc.syscall(425, 4, ctypes.create_string_buffer(120)) < 0:\n"
    "    raise OSError(ctypes.get_errno(), 'io_uring_setup')",
    "run a shell's /dev/tcp": "import subprocess\n"
    "tcp = ['bash', '-c', f'echo src > /dev/tcp/127.0.0.1/{TCP}']\n"
    "subprocess.run(tcp, stderr=subprocess.DEVNULL, check=True)",
}


@pytest.fixture
def listeners(tmp_path: Path) -> Iterator[dict[str, socket.socket]]:
    """A TCP and a UDP socket on 127.0.0.1, a unix socket in a directory under /tmp that any user may connect
    to (as PostgreSQL's is), and an abstract one: each non-blocking, looked at once the tool has ended."""
    tcp = socket.create_server(("127.0.0.1", 0))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(tmp_path / "s.sock"))
    os.chmod(tmp_path / "s.sock", 0o777)
    unix.listen()
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(f"\0sentinel-test-{os.getpid()}-{id(abstract)}")
    abstract.listen()
    found = {"tcp": tcp, "udp": udp, "unix": unix, "abstract": abstract}
    for s in found.values():
        s.setblocking(False)
    yield found
    for s in found.values():
        s.close()


def _reached(listeners: dict[str, socket.socket]) -> list[str]:
    """Which listener a connection or a packet reached (already queued: the tool has ended)."""
    reached = []
    for name, s in listeners.items():
        try:
            s.recv(64) if name == "udp" else s.accept()[0].close()
        except BlockingIOError:
            continue
        reached.append(name)
    return reached


def _python_tool(attack: str, where: str = "") -> str:
    """A stand-in tool that makes ``attack`` (``where``: the names it uses) and says whether it was refused
    (its output: that of its exit 1)."""
    body = "    " + attack.replace("\n", "\n    ")
    return (
        f"#!{TOOL_PYTHON}\nimport socket, sys\n{where}\ntry:\n{body}\n    print('BROKE')\n"
        "except Exception as e:\n    print('refused:', type(e).__name__, getattr(e, 'errno', ''))\n"
        "sys.exit(1)\n"
    )


@pytest.mark.parametrize("attack", list(_ATTACKS))
async def test_a_tool_has_no_network(tmp_path, listeners, attack) -> None:
    where = (
        f"TCP = {listeners['tcp'].getsockname()[1]}\nUDP = {listeners['udp'].getsockname()[1]}\n"
        f"UNIX = {listeners['unix'].getsockname()!r}\nABSTRACT = {listeners['abstract'].getsockname()!r}\n"
    )
    tools = script_tools(tmp_path, _python_tool(_ATTACKS[attack], where))
    report = await tools.check_kotlin(KOTLIN)
    ran = " ".join(report.notes)
    assert "refused:" in ran and "BROKE" not in ran, ran
    assert _reached(listeners) == []
    said = [n for n in tools.describe() if n.startswith("no network for the tools")]
    assert said and "no socket can be opened" in said[0], tools.describe()
    assert ("a network namespace of its own" in said[0]) == namespaces_here(), said


async def test_a_tools_own_loopback_is_not_the_hosts(tmp_path, listeners) -> None:
    """A root gateway's tool is in a network namespace of its own: not the host's (its sockets, its ports)."""
    if not namespaces_here():
        pytest.skip("no network namespace here: the gateway is not root, or is refused one")
    script = "#!/bin/sh\nreadlink /proc/self/ns/net\nexit 1\n"
    report = await script_tools(tmp_path, script).check_kotlin(KOTLIN)
    ran = " ".join(report.notes)
    assert "net:[" in ran, ran
    assert os.readlink("/proc/self/ns/net") not in ran, ran


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv")
async def test_a_gateway_refused_network_namespaces_runs_its_tools_filtered_and_says_so(
    tmp_path, listeners
) -> None:
    """A root gateway in a container without CAP_SYS_ADMIN (here: that capability out of its bounding set)
    is refused a network namespace: its tools still run, with the socket filter, and its reports say so."""
    script = _python_tool(
        f"s = socket.create_connection(('127.0.0.1', {listeners['tcp'].getsockname()[1]}), 5)\n"
        "print('BROKE')"
    )
    (tmp_path / "java").write_text(script)
    (tmp_path / "java").chmod(0o755)
    (tmp_path / "ktlint").write_text("not a jar\n")
    runner = (
        "import asyncio, json\n"
        "from sentinel_mcp.swarm.toolchain import Toolchain, VerifySettings\n"
        f"s = VerifySettings(kotlin=True, resources=False, java={str(tmp_path / 'java')!r}, "
        f"ktlint={str(tmp_path / 'ktlint')!r})\n"
        "t = Toolchain(s)\n"
        f"r = asyncio.run(t.check_kotlin({KOTLIN!r}))\n"
        "print(json.dumps({'notes': r.notes, 'said': t.describe()}))\n"
    )
    ran = subprocess.run(
        ["setpriv", "--bounding-set=-sys_admin", sys.executable, "-c", runner],
        env=dict(os.environ, PYTHONPATH=os.getcwd()),
        capture_output=True,
        text=True,
        timeout=60,
    )
    got = json.loads(ran.stdout.splitlines()[-1])
    assert "refused:" in " ".join(got["notes"]) and "BROKE" not in " ".join(got["notes"]), got
    said = [n for n in got["said"] if n.startswith("no network for the tools")]
    assert said and "no network namespace of their own" in said[0], got["said"]
    assert _reached(listeners) == []
