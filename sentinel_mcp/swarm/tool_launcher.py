"""The process a verification tool is started through: its limits set before it runs, it joins its
cgroup, and a supervisor outside the cgroup kills all of it when the gateway dies (the script, and why,
below)."""

from __future__ import annotations

import os
import sys

from sentinel_mcp.swarm.tool_cgroup import ToolCgroup

# the tool's limits, set by the process that then becomes the tool (exec, same pid), so whatever it starts has
# them from its first instruction (set from outside once it runs, a child it forked at once would not; and no
# preexec_fn: the gateway has threads). The process count and memory are capped by the tool's cgroup (joined
# before exec, so every process it starts is in it, whatever session it moves to), not by rlimits: a JVM
# reserves far more address space than it uses, and RLIMIT_NPROC counts the user's processes (none as root).
# It runs under a small supervisor that stays outside the cgroup: on Linux the kernel tells the supervisor
# when the gateway dies (PR_SET_PDEATHSIG; a gateway already gone by then is seen as a new parent, and the
# tool is not run), and the supervisor then kills the whole cgroup (the death signal alone reached the tool's
# first process only: what a launcher script or a daemon started lived on); the tool's first process is
# killed with the supervisor the same way.
LAUNCHER = (
    "import os, resource, signal, sys\n"
    "def cap(kind, n):\n"
    "    hard = resource.getrlimit(kind)[1]\n"
    "    n = n if hard == resource.RLIM_INFINITY else min(n, hard)\n"
    "    resource.setrlimit(kind, (n, n))\n"
    "cap(resource.RLIMIT_FSIZE, int(sys.argv[1]))\n"
    "cap(resource.RLIMIT_CORE, 0)\n"
    "n = int(sys.argv[3])\n"
    "groups, tool = sys.argv[4:4 + n], sys.argv[4 + n:]\n"
    "def listed(g):\n"
    "    try:\n"
    "        with open(g) as f:\n"
    "            return {int(p) for p in f.read().split()}\n"
    "    except (OSError, ValueError):\n"
    "        return set()\n"
    "def stop(*_):\n"
    "    for g in groups:\n"
    "        try:\n"
    "            with open(g[: -len('cgroup.procs')] + 'cgroup.kill', 'w') as f:\n"
    "                f.write('1')\n"
    "        except OSError:\n"
    "            pass\n"
    "    for _ in range(16):\n"
    "        found = False\n"
    "        for g in groups:\n"
    "            for p in listed(g):\n"
    "                try:\n"
    "                    fd = os.pidfd_open(p)\n"
    "                except OSError:\n"
    "                    continue\n"
    "                try:\n"
    "                    if p in listed(g):\n"
    "                        signal.pidfd_send_signal(fd, signal.SIGKILL)\n"
    "                        found = True\n"
    "                except OSError:\n"
    "                    pass\n"
    "                finally:\n"
    "                    os.close(fd)\n"
    "        if not found:\n"
    "            break\n"
    "    os.killpg(0, signal.SIGKILL)\n"
    "linux = sys.platform.startswith('linux')\n"
    "if linux:\n"
    "    import ctypes\n"
    "    prctl = ctypes.CDLL(None, use_errno=True).prctl\n"
    "    signal.signal(signal.SIGTERM, stop)\n"
    "    if prctl(1, signal.SIGTERM) != 0 or os.getppid() != int(sys.argv[2]):\n"
    "        sys.exit('not run: its parent could not be tied to it, or is gone')\n"
    "supervisor = os.getpid()\n"
    "child = os.fork()\n"
    "if child == 0:\n"
    "    try:\n"
    "        for g in groups:\n"
    "            with open(g, 'w') as f:\n"
    "                f.write(str(os.getpid()))\n"
    "        if linux and (prctl(1, signal.SIGKILL) != 0 or os.getppid() != supervisor):\n"
    "            os._exit(126)\n"
    "        os.execv(tool[0], tool)\n"
    "    except BaseException as e:\n"
    "        os.write(2, f'not run: {type(e).__name__}: {e}\\n'.encode())\n"
    "    os._exit(126)\n"
    "code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])\n"
    "sys.exit(code if code >= 0 else 128 - code)\n"
)


def launched(argv: list[str], cgroup: ToolCgroup | None, file_bytes: int) -> list[str]:
    """``argv`` run with each file it writes bounded to ``file_bytes``, no core dump, in ``cgroup`` (its
    processes and memory capped), and (Linux) all of it killed with this process (isolated Python: no site,
    no ``PYTHON*`` variable read)."""
    tool = os.path.abspath(argv[0])
    groups = cgroup.procs_files() if cgroup is not None else []
    limits = [str(file_bytes), str(os.getpid()), str(len(groups)), *groups]
    return [sys.executable, "-I", "-S", "-c", LAUNCHER, *limits, tool, *argv[1:]]
