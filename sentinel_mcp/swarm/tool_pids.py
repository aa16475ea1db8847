"""A verification tool sees no process but its own (a root gateway): a pid namespace of its own.

With the machine's /proc a tool (hostile code: a build step's plugins, a parser's bug) saw every process: the
gateway (its pid, command line, status), another build's tool, other users' processes and their command lines,
the machine's init, and the pids in every cgroup's ``cgroup.procs``; and a signal to any pid told it whether
that process was there. So the supervisor (root) moves the processes it starts next into a new pid
namespace (``own_pids``, before it forks the tool's first process), and that first process, the namespace's
init, mounts a /proc of that namespace over the machine's (in its own mount namespace: ``tool_files.py``,
which this needs; the init itself hidden in it from the tool), forks the tool and stays (``init``): it
reaps what is re-parented to it and passes the tool's exit status on. When it ends, with the tool, the
kernel kills whatever the tool left in the namespace: nothing it started outlives it. It stays root, as the
supervisor does: the tool (another uid) can neither signal nor trace it.

The supervisor loads this file by its path (standard library only). A machine that refuses the namespace (a
container without CAP_SYS_ADMIN) is seen by ``pids_here`` (tried once, by a child) and said.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys

_CLONE_NEWNS, _CLONE_NEWPID = 0x00020000, 0x20000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 1, 2, 4, 8, 0x4000, 0x40000


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
    return libc


def _checked(r: int, what: str) -> None:
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def own_pids() -> None:
    """The processes this (root) process starts next are in a new pid namespace (it stays in its own); the
    first one is that namespace's init. OSError when it could not be made."""
    _checked(_libc().unshare(_CLONE_NEWPID), "no pid namespace could be made")


def own_proc() -> None:
    """A /proc of this process's pid namespace over the machine's (its own mount namespace taken already):
    the processes of the namespace only, and of those only the ones the reader could trace (``hidepid``):
    the init (this process: the supervisor's fork, root or with every capability of its user namespace) is
    not listed to the tool, its command line (the supervisor's arguments: the gateway's pid, the cgroups'
    paths, the tool's uid), status and files unread. Read-only: a tool's process may write a number of files
    of its own there (``comm``, ``oom_score_adj``, ``timerslack_ns``, ``mem``; ``uid_map`` and
    ``/proc/sys`` files opened, refused later), each a kernel handler a checker has no need of.
    OSError when it could not be mounted."""
    flags = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    _checked(
        _libc().mount(b"proc", b"/proc", b"proc", flags, b"hidepid=invisible"),
        "no /proc of its own could be mounted",
    )


def init(tool: int) -> int:
    """Be the namespace's init until ``tool`` (its child) ends: reap every process re-parented here (an
    orphan of the tool's), then pass the tool's status on (128 + N for a signal N, as a shell says it). Its
    return ends the namespace: the kernel kills what the tool left in it."""
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:  # the tool is a child until reaped here: not reached
            return 126
        except InterruptedError:
            continue
        if pid == tool:
            code = os.waitstatus_to_exitcode(status)
            return code if code >= 0 else 128 - code


@functools.cache
def pids_here() -> bool:
    """Whether this (root) process may give its tools a pid namespace and its /proc: tried once, by a
    child."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return False
    from sentinel_mcp.swarm.tried_by_child import probe_passes  # (this file also runs by path: imported here)

    return probe_passes(__file__)


def pids_said(own: bool) -> str:
    if own:
        return (
            "each tool sees only its own processes (a pid namespace of its own, its own /proc): not the "
            "gateway's, another tool's or the machine's; nothing it started outlives it"
        )
    return (
        "the tools see every process of the machine and its command line in /proc (no pid namespace: the "
        "gateway is not root, or is refused one here): the gateway's, other tools', other users'"
    )


def _probe() -> int:
    os.close(os.pidfd_open(os.getpid()))  # how the namespace's init asks whether the supervisor is there
    libc = _libc()
    _checked(libc.unshare(_CLONE_NEWNS), "no mount namespace")
    _checked(libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "mounts not private")
    own_pids()
    child = os.fork()
    if child == 0:
        try:
            own_proc()
            os._exit(0 if os.getpid() == 1 and os.listdir("/proc").count("1") == 1 else 1)
        except BaseException:
            os._exit(1)
    return os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])


if __name__ == "__main__":  # the probe of ``pids_here``
    try:
        sys.exit(_probe())
    except OSError:
        sys.exit(1)
