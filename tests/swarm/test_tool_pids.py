"""A verification tool sees no process but its own: a root gateway gives it a pid namespace of its own.

Found by red team 'swarm' 6: a tool (hostile code: a build step's plugins, a parser's bug) listed /proc and
saw every process of the machine: the gateway (its pid, its command line and status: its config's path, its
arguments), another build's tool, other users' processes and what they were started with, the machine's init
(/proc/1), and the pids in every cgroup's ``cgroup.procs``; and it could probe any of them with a signal
(refused by uid, but "refused" says "it is there"). Now its first process is the init of a pid namespace of
its own, with a /proc of that namespace (``tool_pids.py``). Each attack is a stand-in ``java`` that prints
BROKE when it reached what it should not."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest

from tests.swarm.support.tool_processes import KOTLIN, TOOL_PYTHON, script_tools

from sentinel_mcp.swarm.tool_pids import pids_here

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.usefixtures("tools_reach_tmp_path"),
    pytest.mark.skipif(not pids_here(), reason="no pid namespace for tools here (not root, or refused)"),
]

_ATTACKS = {
    "list /proc: the gateway's pid is there": "broke(str(GATEWAY) in os.listdir('/proc'))",
    "read the gateway's command line": "broke(b'pytest' in open(f'/proc/{GATEWAY}/cmdline', 'rb').read())",
    "read the gateway's status": "broke('Uid:' in open(f'/proc/{GATEWAY}/status').read())",
    "probe the gateway with a signal (refused: it is there)": "probe(GATEWAY)",
    "read another user's process's command line": "broke(any(MARKER in c for c in cmdlines()))",
    "probe another user's process with a signal": "probe(OTHER)",
    "read the machine's init's command line (/proc/1)": "broke(open('/proc/1/cmdline', 'rb').read() == INIT)",
    "count the machine's processes": "broke(len(cmdlines()) > 8)",
    "find the gateway in the cgroups' cgroup.procs": "broke(str(GATEWAY) in cgroup_pids())",
    # red team 'swarm' 7: its init is the supervisor's fork, whose command line (world-readable) carried the
    # gateway's pid, the cgroups' paths, the tool's uid and the toolchain's paths
    "read its init's command line (the supervisor's)": "broke(len(open('/proc/1/cmdline').read()) > 0)",
    "read its init's status": "broke('Uid:' in open('/proc/1/status').read())",
    "list its init in /proc": "broke('1' in os.listdir('/proc'))",
}
# refused already by the tool's own uid (red team 'swarm' 4), and still
_STILL_REFUSED = {
    "read the gateway's environment": "broke(len(open(f'/proc/{GATEWAY}/environ', 'rb').read()) > 0)",
    "read the gateway's open files": "broke(len(os.listdir(f'/proc/{GATEWAY}/fd')) > 0)",
    "read its init's environment (root's)": "broke(len(open('/proc/1/environ', 'rb').read()) > 0)",
    "kill its init": "os.kill(1, 9)\nbroke(True)",
}


def _tool(attack: str, gateway: int, other: int, marker: str, init: bytes) -> str:
    return (
        f"#!{TOOL_PYTHON}\nimport errno, os, sys\n"
        f"GATEWAY, OTHER, MARKER, INIT = {gateway}, {other}, {marker.encode()!r}, {init!r}\n"
        "def broke(reached):\n    print('BROKE' if reached else 'refused:')\n"
        "def probe(pid):\n    try:\n        os.kill(pid, 0)\n        broke(True)\n"
        "    except PermissionError:\n        broke(True)\n"  # refused: it is there
        "    except ProcessLookupError:\n        broke(False)\n"
        "def cmdlines():\n    got = []\n"
        "    for p in (n for n in os.listdir('/proc') if n.isdigit()):\n"
        "        try:\n            got.append(open(f'/proc/{p}/cmdline', 'rb').read())\n"
        "        except OSError:\n            pass\n    return got\n"
        "def cgroup_pids():\n    got = set()\n"
        "    for i, (top, _, files) in enumerate(os.walk('/sys/fs/cgroup')):\n"
        "        if i > 4000:\n            break\n"
        "        if 'cgroup.procs' in files:\n            try:\n"
        "                got.update(open(top + '/cgroup.procs').read().split())\n"
        "            except OSError:\n                pass\n    return got\n"
        "try:\n    " + attack.replace("\n", "\n    ") + "\n"
        "except OSError as e:\n    print('refused:', type(e).__name__)\n"
        "sys.exit(1)\n"
    )


@pytest.fixture
def other_process() -> Iterator[tuple[int, str]]:
    """A process of another user's (root's here), with a mark on its command line."""
    marker = f"sentinel-other-{uuid.uuid4().hex}"
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker])
    try:
        yield proc.pid, marker
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("attack", [*_ATTACKS, *_STILL_REFUSED])
async def test_a_tool_sees_no_process_but_its_own(tmp_path, other_process, attack) -> None:
    other, marker = other_process
    with open("/proc/1/cmdline", "rb") as f:
        init = f.read()
    script = _tool({**_ATTACKS, **_STILL_REFUSED}[attack], os.getpid(), other, marker, init)
    report = await script_tools(tmp_path, script).check_kotlin(KOTLIN)
    ran = " ".join(report.notes)
    assert "refused:" in ran and "BROKE" not in ran, ran


@pytest.mark.parametrize(
    ("ending", "said"),
    [("sys.exit(3)", "exit 3"), ("os.kill(os.getpid(), 9)", "exit 137"), ("os._exit(0)", None)],
)
async def test_the_tools_status_is_passed_on_by_its_init(tmp_path, ending, said) -> None:
    """The tool is its namespace's second process, under an init that passes its status on as the
    supervisor did (128 + N for a signal N); what it left running ends with it."""
    script = (
        f"#!{TOOL_PYTHON}\nimport os, subprocess, sys\n"
        "subprocess.Popen(['sleep', '600'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(os.getpid(), os.getppid(), flush=True)\n"
        f"{ending}\n"
    )
    report = await script_tools(tmp_path, script).check_kotlin(KOTLIN)
    if said is None:  # exit 0, no JSON: nothing found, nothing said
        assert report.notes == [] and report.issues == [], report
    else:
        assert report.notes and f"({said})" in report.notes[0], report.notes
        if said == "exit 3":
            assert report.notes[0].endswith("): 2 1"), (
                report.notes
            )  # itself pid 2, its parent pid 1: the namespace's init


def test_the_tools_own_processes_are_said(tmp_path) -> None:
    said = script_tools(tmp_path, "#!/bin/sh\nexit 1\n").describe()
    assert any("sees only its own processes" in n for n in said), said


@pytest.mark.skipif(not shutil.which("setpriv"), reason="needs setpriv")
def test_a_gateway_refused_pid_namespaces_says_its_tools_see_every_process(tmp_path) -> None:
    """A root gateway in a container without CAP_SYS_ADMIN (here: that capability out of its bounding set) is
    refused the namespaces: its reports say what its tools see."""
    (tmp_path / "java").write_text("#!/bin/sh\nexit 1\n")
    (tmp_path / "java").chmod(0o755)
    (tmp_path / "ktlint").write_text("not a jar\n")
    runner = (
        "import json\nfrom sentinel_mcp.swarm.toolchain import Toolchain, VerifySettings\n"
        f"s = VerifySettings(kotlin=True, resources=False, java={str(tmp_path / 'java')!r}, "
        f"ktlint={str(tmp_path / 'ktlint')!r})\n"
        "print(json.dumps(Toolchain(s).describe()))\n"
    )
    ran = subprocess.run(
        ["setpriv", "--bounding-set=-sys_admin", sys.executable, "-c", runner],
        env=dict(os.environ, PYTHONPATH=os.getcwd()),
        capture_output=True,
        text=True,
        timeout=60,
    )
    said = json.loads(ran.stdout.splitlines()[-1])
    assert any("see every process of the machine" in n for n in said), said
