"""A verification tool can make no namespace, mount, trace, or reach the kernel's riskier interfaces.

Found by red team 'swarm' 5: the socket filter let a tool (hostile code: a build step's plugins, a parser's
bug) make a user namespace (``unshare -U -r``: allowed to any user here), be root within it, and from there
mount what it liked (``mount -t tmpfs``), set up networks, and reach the kernel code kept for CAP_SYS_ADMIN;
and trace its own children, use bpf, perf events, userfaultfd, the key store. Now the same filter refuses
them (``tool_network.py``). Each attack is a stand-in ``java`` that tries it and prints BROKE when it worked.
"""

from __future__ import annotations

import platform

import pytest

from tests.swarm.support.tool_processes import KOTLIN, TOOL_PYTHON, script_tools

from sentinel_mcp.swarm.tool_network import filter_here

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.usefixtures("tools_reach_tmp_path"),
    pytest.mark.skipif(not filter_here(), reason="no seccomp filter for this machine"),
]

# this machine's numbers of the calls the attacks make through libc's syscall()
_NR = {
    "x86_64": {"clone": 56, "clone3": 435, "bpf": 321, "userfaultfd": 323, "add_key": 248, "perf": 298},
    "aarch64": {"clone": 220, "clone3": 435, "bpf": 280, "userfaultfd": 282, "add_key": 217, "perf": 241},
}.get(platform.machine(), {})

_CLONE_NEWUSER, _SIGCHLD = 0x10000000, 17

_ATTACKS = {
    "unshare -U -r (a user namespace, root in it)": "run(['unshare', '-U', '-r', 'true'])",
    "unshare -m (a mount namespace)": "run(['unshare', '-m', 'true'])",
    "mount a tmpfs as root of a user namespace": "d = tempfile.mkdtemp()\n"
    "run(['unshare', '-U', '-r', '-m', 'mount', '-t', 'tmpfs', 'none', d])",
    "mount a tmpfs": "run(['mount', '-t', 'tmpfs', 'none', tempfile.mkdtemp()])",
    "unshare(CLONE_NEWUSER) through libc (os.unshare)": f"call(libc.unshare({_CLONE_NEWUSER}))",
    "clone with CLONE_NEWUSER": f"forked(libc.syscall(NR['clone'], {_CLONE_NEWUSER | _SIGCHLD}, 0, 0, 0, 0))",
    # struct clone_args, its first version (64 bytes): flags, pidfd, child_tid, parent_tid, exit_signal, ...
    "clone3 with CLONE_NEWUSER": f"args = struct.pack('8Q', {_CLONE_NEWUSER}, 0, 0, 0, {_SIGCHLD}, 0, 0, 0)\n"
    "forked(libc.syscall(NR['clone3'], ctypes.c_char_p(args), 64))",
    "ptrace a process of its own": "child = subprocess.Popen(['sleep', '30'])\n"
    "try:\n    call(libc.ptrace(16, child.pid, 0, 0))\nfinally:\n    child.kill()",
    # an array map of one 4-byte entry: type, key size, value size, entries
    "bpf": "attr = struct.pack('4I', 2, 4, 4, 1) + bytes(112)\n"
    "call(libc.syscall(NR['bpf'], 0, ctypes.c_char_p(attr), len(attr)))",
    "userfaultfd (user mode only: no sysctl needed)": "call(libc.syscall(NR['userfaultfd'], 1))",
    "add a key to its keyring": "call(libc.syscall(NR['add_key'], b'user', b'k', b'v', 1, -2))",
    # a software clock of its own user space only (what perf_event_paranoid 2 allows)
    "perf_event_open": "attr = struct.pack('IIQQQQQ', 1, 128, 1, 0, 0, 0, 0b1100000) + bytes(80)\n"
    "call(libc.syscall(NR['perf'], ctypes.c_char_p(attr), 0, -1, -1, 0))",
}


def _tool(attack: str) -> str:
    """A stand-in tool that makes ``attack`` and says whether it was refused (its output: that of its exit 1).
    ``forked``: a clone's return (0 in a child it made: that child ends at once)."""
    body = "    " + attack.replace("\n", "\n    ")
    return (
        f"#!{TOOL_PYTHON}\nimport ctypes, os, struct, subprocess, sys, tempfile\n"
        f"NR = {_NR!r}\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall.restype = ctypes.c_long\n"
        "def run(argv):\n    subprocess.run(argv, stderr=subprocess.DEVNULL, check=True)\n"
        "def call(r):\n    if r < 0:\n        raise OSError(ctypes.get_errno(), 'refused')\n"
        "def forked(r):\n    if r == 0:\n        os._exit(0)\n    call(r)\n    os.waitpid(r, 0)\n"
        f"try:\n{body}\n    print('BROKE')\n"
        "except Exception as e:\n    print('refused:', type(e).__name__, getattr(e, 'errno', ''))\n"
        "sys.exit(1)\n"
    )


@pytest.mark.parametrize("attack", list(_ATTACKS))
async def test_a_tool_cannot_make_namespaces_or_reach_the_kernels_risky_calls(tmp_path, attack) -> None:
    report = await script_tools(tmp_path, _tool(_ATTACKS[attack])).check_kotlin(KOTLIN)
    ran = " ".join(report.notes)
    assert "refused:" in ran and "BROKE" not in ran, ran


async def test_a_tool_still_forks_spawns_and_runs_threads(tmp_path) -> None:
    """What a JVM and aapt do stays allowed: threads (glibc's clone3, refused "not here", falls back to
    clone), fork, posix_spawn, subprocess."""
    script = (
        f"#!{TOOL_PYTHON}\nimport os, subprocess, sys, threading\n"
        "got = []\nt = threading.Thread(target=lambda: got.append('thread'))\nt.start()\nt.join()\n"
        "pid = os.fork()\nif pid == 0:\n    os._exit(7)\n"
        "got.append('fork %d' % os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n"
        "pid = os.posix_spawn('/bin/sh', ['sh', '-c', 'exit 5'], {})\n"
        "got.append('spawn %d' % os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n"
        "got.append(subprocess.run(['echo', 'subprocess'], capture_output=True, text=True).stdout.strip())\n"
        "print(' '.join(got))\nsys.exit(1)\n"
    )
    report = await script_tools(tmp_path, script).check_kotlin(KOTLIN)
    ran = " ".join(report.notes)
    assert "thread fork 7 spawn 5 subprocess" in ran, ran
