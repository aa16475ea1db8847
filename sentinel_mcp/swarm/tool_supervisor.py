"""The process a verification tool is started through (``launched``), run as a script (``python -I -S``:
the standard library only, no site, no ``PYTHON*`` variable read):

    tool_supervisor.py FILE_BYTES DATA_BYTES NPROC GATEWAY_PID UID GID NETNS PIDNS DISK M KEPT...
        N CGROUP_PROCS... TOOL...

Its limits are set here, before the tool runs, so whatever the tool starts has them from its first
instruction (set from outside once it runs, a child it forked at once would not; and no preexec_fn: the
gateway has threads): each file it writes bounded (RLIMIT_FSIZE), its open files (RLIMIT_NOFILE: a JVM running
ktlint holds tens), no core, and each process's data (RLIMIT_DATA: its heap, stacks, private writable maps; a
JVM's heap is within it) to DATA_BYTES (the tool's memory cap and a JVM's own headroom), also where no cgroup
is given. Not its address space (RLIMIT_AS): a JVM reserves far more than it uses. Its process count and
memory are capped by its cgroup (joined by the tool's first process before exec, so every process it starts is
in it, whatever session it moves to); its process count by RLIMIT_NPROC (NPROC) too, which counts its user's
processes (a uid leased to the run: the tool's own; in a user namespace of its own, counted there): where no
cgroup is given, that caps it. The hard limits too: the tool, not root, cannot raise them again.

This process stays outside the cgroup and waits for the tool. On Linux the kernel tells it when the gateway
dies (PR_SET_PDEATHSIG; a gateway already gone by then is seen as a new parent, and the tool is not run):
it then kills all of the tool (the death signal given to the tool itself reached its first process only:
what a launcher script or a daemon started lived on): its cgroup's members, and its own descendants, as
it is the tool's subreaper (PR_SET_CHILD_SUBREAPER): what the tool started, a process that left its session
included, is re-parented to it once orphaned (with no cgroup, a machine that gives none, that is what finds
them). The tool's first process is killed with it the same way.

UID and GID (``-``: unchanged) are the user the tool runs as (``tool_user.py``): the tool's first process
drops to it once in its cgroup, before it runs the tool (no other groups; ``no_new_privs`` set whatever the
user, so a setuid program cannot raise it back). This process stays root: the tool can neither signal it
nor move itself out of its cgroup (both the gateway's own).

Before it runs the tool, on Linux, that first process takes a network namespace of its own when NETNS is 1
(as root, before the drop) and installs the socket filter (after ``no_new_privs``): ``tool_network.py``;
with M not ``-`` it takes its own view of the files, the M KEPT directories given back and DISK bytes for all
it writes (as root, before the drop): ``tool_files.py``.
With PIDNS 1 (and M not ``-``) the processes this one starts are in a pid
namespace of their own: the tool's first process is its init, mounts the namespace's /proc, forks the tool and
reaps, passing the tool's status on (``tool_pids.py``). PIDNS ``u`` (a gateway not root): the same, in a
user namespace this process takes first (``tool_userns.py``). One that fails is refused: the tool is not run.
"""

from __future__ import annotations

import importlib.util
import os
import resource
import select  # (at the start: the tool's view of the files, taken before it is used, may lack this Python's)
import signal
import sys
from typing import Any

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
# of a tool's open files: a JVM running ktlint holds tens (its jars, its libraries, pipes)
MAX_OPEN_FILES = 1024
_SWEEPS = 64  # rounds of killing this process's children (a killed child's own children come to it next)


def _cap(kind: int, n: int) -> None:
    hard = resource.getrlimit(kind)[1]
    n = n if hard == resource.RLIM_INFINITY else min(n, hard)
    resource.setrlimit(kind, (n, n))


def _listed(procs: str) -> set[int]:
    try:
        with open(procs) as f:
            return {int(p) for p in f.read().split()}
    except (OSError, ValueError):
        return set()


def _kill_cgroups(groups: list[str]) -> None:
    """Every process of the tool's cgroups: v2's ``cgroup.kill`` at once, else each one listed (held by a
    pidfd, then seen still listed: a pid reused meanwhile is never signalled)."""
    for procs in groups:
        try:
            with open(procs[: -len("cgroup.procs")] + "cgroup.kill", "w") as f:
                f.write("1")
        except OSError:
            pass
    for _ in range(16):
        found = False
        for procs in groups:
            for pid in _listed(procs):
                try:
                    fd = os.pidfd_open(pid)
                except OSError:
                    continue
                try:
                    if pid in _listed(procs):
                        signal.pidfd_send_signal(fd, signal.SIGKILL)
                        found = True
                except OSError:
                    pass
                finally:
                    os.close(fd)
        if not found:
            return


def _children() -> list[int]:
    """This process's children, from /proc (a child's pid is not reused before it is reaped: signalling it
    cannot reach another process)."""
    me, found = os.getpid(), []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                if int(f.read().rsplit(b")", 1)[1].split()[1]) == me:
                    found.append(int(name))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _reap_all() -> None:
    """Kill this process's children until none is left (a bounded number of rounds): the tool's orphans
    are re-parented here (subreaper), a killed child's own children before its wait returns."""
    for _ in range(_SWEEPS):
        children = _children()
        if not children:
            return
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def launched(
    argv: list[str],
    cgroup_procs: list[str],
    file_bytes: int,
    user: tuple[int, int] | None = None,
    network: bool = False,
    files: list[str] | None = None,
    pids: bool = False,
    users: bool = False,
    processes: int | None = None,
    *,
    data_bytes: int,
    disk_bytes: int,
) -> list[str]:
    """The command that runs ``argv`` under this supervisor: each file it writes bounded to ``file_bytes``, no
    core dump, in the cgroup whose ``cgroup.procs`` files are given, and all of it killed with this process
    (Linux); run as ``user`` (uid, gid) when given, in a network namespace of its own with ``network``, with a
    view of the files of its own with ``files`` (the directories given back in it: the gateway's choice, never
    a path the models wrote), and in a pid namespace of its own with ``pids`` (with ``files`` only: its /proc
    is mounted in that view), all made in a user namespace of its own with ``users`` (a gateway not root):
    there its processes and threads are counted apart from its user's others, capped to ``processes``
    (``RLIMIT_NPROC``: what caps them where no cgroup is given; as ``user`` too, its processes counted). Each
    of its processes' data is bounded to ``data_bytes``; all it writes, with ``files``, to ``disk_bytes``."""
    tool = os.path.abspath(argv[0])
    who = [str(user[0]), str(user[1])] if user is not None else ["-", "-"]
    netns, pidns = "1" if network else "0", ("u" if users else "1") if pids and files is not None else "0"
    own = ["-"] if files is None else [str(len(files)), *files]
    nproc = str(processes) if processes is not None else "-"
    limits = [str(file_bytes), str(data_bytes), nproc, str(os.getpid()), *who, netns, pidns, str(disk_bytes)]
    limits += [*own, str(len(cgroup_procs))]
    limits += cgroup_procs
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), *limits, tool, *argv[1:]]


def main(argv: list[str]) -> int:
    _cap(resource.RLIMIT_FSIZE, int(argv[1]))
    _cap(resource.RLIMIT_DATA, int(argv[2]))
    _cap(resource.RLIMIT_NOFILE, MAX_OPEN_FILES)
    _cap(resource.RLIMIT_CORE, 0)
    nproc, gateway = None if argv[3] == "-" else int(argv[3]), int(argv[4])
    user = None if argv[5] == "-" else (int(argv[5]), int(argv[6]))
    netns, pidns, userns = argv[7] == "1", argv[8] in ("1", "u"), argv[8] == "u"
    disk = int(argv[9])
    kept, at = (None, 11) if argv[10] == "-" else (argv[11 : 11 + int(argv[10])], 11 + int(argv[10]))
    n = int(argv[at])
    groups, tool = argv[at + 1 : at + 1 + n], argv[at + 1 + n :]
    linux = sys.platform.startswith("linux")

    def stop(*_: object) -> None:
        _kill_cgroups(groups)
        _reap_all()
        os._exit(128 + signal.SIGTERM)

    if linux:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
        signal.signal(signal.SIGTERM, stop)
        if prctl(_PR_SET_PDEATHSIG, signal.SIGTERM) != 0 or os.getppid() != gateway:
            return _refused("its parent could not be tied to it, or is gone")
        if prctl(_PR_SET_CHILD_SUBREAPER, 1) != 0:
            return _refused("it could not be made the tool's subreaper")
    network = _module("tool_network") if linux else None
    files = _module("tool_files") if linux and kept is not None else None
    pids = _module("tool_pids") if files is not None and pidns else None
    supervisor = os.getpid()
    watched = os.pidfd_open(supervisor) if pids is not None else -1
    if pids is not None:
        try:
            if userns:  # this process too: the pid namespace below is then owned by (made in) it
                _module("tool_userns").own_user()
                # a change of credentials may clear the tie to the gateway (kernels differ): made again
                if prctl(_PR_SET_PDEATHSIG, signal.SIGTERM) != 0 or os.getppid() != gateway:
                    return _refused("its parent could not be tied to it, or is gone")
                if nproc is not None:  # counted in this namespace: this process, the init and the tool's
                    _cap(resource.RLIMIT_NPROC, nproc + 2)
            pids.own_pids()  # this process stays where it is: what it forks next is the namespace's init
        except OSError as e:
            return _refused(str(e))
    child = os.fork()
    if child == 0:
        try:
            for procs in groups:
                with open(procs, "w") as f:
                    f.write("0")  # this process (its pid in its own namespace is 1)
            if netns and network is not None:
                network.own_network()  # made as root, before the drop
            if files is not None and kept is not None:
                files.own_files(os.getcwd(), kept, disk, user)
            parent = supervisor
            if pids is not None:
                pids.own_proc()
                _init(pids, prctl, watched)  # returns in the tool's own process only
                parent = 1
            if user is not None:
                if nproc is not None:
                    # the processes of its user (a uid leased to this run: the tool's own), where no cgroup
                    # counts them (the cgroup, counting the root init too, says it first where one does)
                    _cap(resource.RLIMIT_NPROC, nproc)
                _become(*user)
            if linux and prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                os._exit(126)
            if network is not None and network.filter_here():
                network.seal()
            # set after the drop: a change of user clears the parent-death signal
            if linux and (prctl(_PR_SET_PDEATHSIG, signal.SIGKILL) != 0 or os.getppid() != parent):
                os._exit(126)
            os.execv(tool[0], tool)
        except BaseException as e:
            os.write(2, f"not run: {type(e).__name__}: {e}\n".encode())
        os._exit(126)
    code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
    # what the tool left running is not killed here: one still writing its output is the tool's work,
    # which the gateway waits for (to its timeout) and then stops whole; killed here, its output would be
    # cut short and read as the tool's whole answer
    return code if code >= 0 else 128 - code


def _init(pids: Any, prctl: Any, watched: int) -> None:
    """As the pid namespace's init: tied to the supervisor (killed with it: the namespace, and all of the
    tool, with it), fork the tool, whose process alone returns from here; this one reaps, then ends with the
    tool's status."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the supervisor's handler is not this process's
    # its parent is outside the namespace (getppid says 0): whether it is still there is asked of its pidfd
    poll = select.poll()
    poll.register(watched, select.POLLIN)
    if prctl(_PR_SET_PDEATHSIG, signal.SIGKILL) != 0 or poll.poll(0):
        os._exit(126)
    os.close(watched)
    tool = os.fork()
    if tool == 0:
        return
    os._exit(pids.init(tool))


def _module(name: str) -> Any:
    """``tool_network.py``, ``tool_files.py``, ``tool_pids.py`` or ``tool_userns.py``, loaded by its path:
    this script runs with no path to the package (``-I -S``), and the directory it is in holds modules named
    as the standard library's (``profile``)."""
    spec = importlib.util.spec_from_file_location(
        f"_sentinel_{name}", os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _become(uid: int, gid: int) -> None:
    """Be ``uid``/``gid`` for good, with no other group; checked: a root left anywhere is refused."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid) or os.getgroups():
        raise PermissionError("the tool's user could not be taken")
    try:
        os.setuid(0)
    except PermissionError:
        return
    raise PermissionError("root could be taken back")


def _refused(why: str) -> int:
    sys.stderr.write(f"not run: {why}\n")
    return 126


if __name__ == "__main__":
    sys.exit(main(sys.argv))
