"""A verification tool's own cgroup: its process count and memory capped by the kernel, and every process it
started found and killed when it ends, whatever session or group it moved to (``setsid``, a double fork).

Each tool gets a child of the gateway's own cgroup in each hierarchy that gives one of these (so the caps
nest under whatever holds the gateway): cgroup v1's ``pids`` and ``memory`` hierarchies, or v2 where its
``subtree_control`` enables them, and v2's ``cgroup.kill`` where it is. A machine with none of them writable
(not root, no delegation) gets ``None``: the session sweep is then what stops a tool (said in each report).

A cgroup left by a gateway that died (kill -9) before it removed it is killed and removed by the next tool
run by any gateway of the machine: it is named for its gateway's pid and that process's start time (a pid
alone is reused: a dead gateway's pid taken by another process kept its cgroup, and its tool, for good), and
it is stale unless a process of that pid, started at that time, is running when it is looked at.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path

from sentinel_mcp.core.errors import SwarmError

log = logging.getLogger(__name__)

_PREFIX = "sentinel-tool-"
_names = itertools.count(1)


@dataclass(frozen=True)
class _Hierarchy:
    own: Path  # the gateway's own cgroup in this hierarchy
    v2: bool
    controllers: frozenset[str]  # of pids and memory, what a child here can cap


@dataclass
class ToolCgroup:
    dirs: list[Path]  # one per hierarchy the tool joins
    pids_max: int
    memory_max: int
    pids: Path | None = None
    memory: Path | None = None
    memory_v2: bool = False
    kill_file: Path | None = None  # v2's cgroup.kill
    reason: str | None = field(default=None)

    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def cap_reached(self) -> str | None:
        """Which cap the tool passed, if any (a fork refused at the process cap, a process the kernel killed
        at the memory cap); kept once seen."""
        if self.reason is None and self.pids is not None and _count(self.pids / "pids.events", "max") > 0:
            self.reason = f"its processes reached the cap of {self.pids_max}"
        if self.reason is None and self.memory is not None:
            events = self.memory / ("memory.events" if self.memory_v2 else "memory.oom_control")
            if _count(events, "oom_kill") > 0:
                self.reason = f"its memory reached the cap of {self.memory_max // (1024 * 1024)} MiB"
        return self.reason

    def kill(self) -> None:
        """Kill every process in the cgroup: at once where v2's ``cgroup.kill`` is, else each one listed,
        looked again (a bounded number of times, the process cap bounding what one look finds) while any
        was found, as one may fork as it is killed."""
        if self.kill_file is not None:
            with contextlib.suppress(OSError):
                self.kill_file.write_text("1")
        for _ in range(_SWEEPS):
            if not any([_kill_members(d) for d in self.dirs]):
                return

    def empty(self) -> bool:
        return all(not _members(d) for d in self.dirs)

    def remove(self) -> bool:
        """Remove the cgroup's directories (False: one still holds a process, exiting or not killed)."""
        gone = True
        for d in self.dirs:
            try:
                d.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                gone = False
        return gone


_SWEEPS = 16


class NoToolCgroup(SwarmError):
    """This machine gives the gateway cgroups, and one for a tool could not be made: the tool is not run
    (run without, it would have none of its caps)."""


def tool_cgroup(pids_max: int, memory_max: int, *, gateway: int | None = None) -> ToolCgroup | None:
    """A new cgroup for one tool, its caps set where the hierarchies allow (``pids``/``memory`` set say
    which); None when this machine gives this process none (``NoToolCgroup``: it gives some, and one
    could not be made). ``gateway``: the pid of the running process it is named for (this process's)."""
    hierarchies = _hierarchies()
    if not hierarchies:
        return None
    pid = gateway or os.getpid()
    started = _start_time(pid)
    if started is None:
        raise NoToolCgroup(f"the start time of process {pid} could not be read")
    name = f"{_PREFIX}{pid}-{started}-{next(_names)}"
    cg = ToolCgroup(dirs=[], pids_max=pids_max, memory_max=memory_max)
    try:
        for h in hierarchies:
            _sweep_stale(h.own)
            d = h.own / name
            d.mkdir(mode=0o700)
            cg.dirs.append(d)
            if h.v2 and (d / "cgroup.kill").exists():
                cg.kill_file = d / "cgroup.kill"
            if "pids" in h.controllers and cg.pids is None:
                (d / "pids.max").write_text(str(pids_max))
                cg.pids = d
            if "memory" in h.controllers and cg.memory is None:
                _cap_memory(d, h.v2, memory_max)
                cg.memory, cg.memory_v2 = d, h.v2
    except OSError as e:
        cg.remove()
        raise NoToolCgroup(f"no cgroup could be made for it ({type(e).__name__}: {e})") from e
    return cg


def caps_here() -> frozenset[str] | None:
    """What a tool's cgroup caps on this machine (of ``pids``, ``memory``); None: no cgroup is given."""
    hierarchies = _hierarchies()
    return frozenset().union(*(h.controllers for h in hierarchies)) if hierarchies else None


def caps_said(max_processes: int, max_memory_mb: int, counted: str | None = None) -> str:
    """What a build's report says of its tools' cgroups on this machine (``counted``: where each tool's
    processes are counted and capped without one, ``tool_supervisor.py``: "in its user namespace", "as its
    own user")."""
    caps = caps_here()
    if caps is None and counted:
        return (
            f"no cgroup for the tools here: their memory is not capped, and a process that leaves a tool's "
            f"session is not stopped; each tool's processes and threads are capped to {max_processes} "
            f"{counted}"
        )
    if caps is None:
        return (
            "no cgroup for the tools here: their processes and memory are not capped, and a process that "
            "leaves a tool's session is not stopped"
        )
    capped = [f"{max_processes} processes"] if "pids" in caps else []
    capped += [f"{max_memory_mb} MiB of memory"] if "memory" in caps else []
    return (
        f"each tool in a cgroup of its own, every process it starts stopped with it; capped: "
        f"{', '.join(capped) or 'nothing'}"
    )


def _cap_memory(d: Path, v2: bool, memory_max: int) -> None:
    if v2:
        (d / "memory.max").write_text(str(memory_max))
        with contextlib.suppress(FileNotFoundError):  # no swap to escape to (the file: swap accounted)
            (d / "memory.swap.max").write_text("0")
        return
    (d / "memory.limit_in_bytes").write_text(str(memory_max))
    with contextlib.suppress(FileNotFoundError):  # memory and swap together held to the same cap
        (d / "memory.memsw.limit_in_bytes").write_text(str(memory_max))


def _hierarchies() -> list[_Hierarchy]:
    """The gateway's own cgroup in each mounted hierarchy a tool's cgroup is useful in, writable by it."""
    try:
        own = [line.split(":", 2) for line in Path("/proc/self/cgroup").read_text().splitlines()]
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    found: list[_Hierarchy] = []
    for _, names, rel in (o for o in own if len(o) == 3):
        wanted = set(names.split(",")) & {"pids", "memory"} if names else set()
        if names and not wanted:
            continue
        for mount in mounts:
            fields, _, tail = mount.partition(" - ")
            parts, kind = fields.split(), tail.split()
            if len(parts) < 5 or len(kind) < 3:
                continue
            v2 = kind[0] == "cgroup2"
            if not (v2 and not names) and not (kind[0] == "cgroup" and wanted <= set(kind[2].split(","))):
                continue
            root, point = parts[3], parts[4]
            if not rel.startswith(root):
                continue
            d = Path(point) / rel[len(root) :].lstrip("/")
            if not os.access(d, os.W_OK):
                continue
            if v2:
                with contextlib.suppress(OSError):
                    wanted = set((d / "cgroup.subtree_control").read_text().split()) & {"pids", "memory"}
                if not (d / "cgroup.kill").exists() and not wanted:
                    continue
            found.append(_Hierarchy(d, v2, frozenset(wanted)))
            break
    return found


def _sweep_stale(own: Path) -> None:
    """Kill and remove what a gateway that died left (its tool's processes live on in its cgroup)."""
    with contextlib.suppress(OSError):
        for d in own.iterdir():
            if not d.name.startswith(_PREFIX) or _gateway_running(d.name.removeprefix(_PREFIX)):
                continue
            for _ in range(_SWEEPS):
                if not _kill_members(d):
                    break
            with contextlib.suppress(OSError):
                d.rmdir()


def _gateway_running(name: str) -> bool:
    """Whether the gateway a cgroup is named for (``PID-STARTTIME-N``) runs: a process of that pid started
    at that time. A gateway of an earlier release named it ``PID-N``: any process of that pid then counts
    (its tools are not killed while it runs, during an upgrade); any other name is stale."""
    parts = name.split("-")
    if not all(p.isdigit() for p in parts):
        return False
    if len(parts) == 2:
        return _start_time(int(parts[0])) is not None
    return len(parts) == 3 and _start_time(int(parts[0])) == int(parts[1])


def _start_time(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot (/proc/PID/stat's 22nd field: the fields after the
    name, which ends at the last parenthesis); None when no such process runs."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _members(d: Path) -> list[int]:
    try:
        return [int(p) for p in (d / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _kill_members(d: Path) -> bool:
    """SIGKILL each process listed in the cgroup, each held by a pidfd then seen still listed (a pid that
    ended and was reused meanwhile is never signalled); whether any was found."""
    fds: dict[int, int] = {}
    for pid in _members(d):
        with contextlib.suppress(OSError):
            fds[pid] = os.pidfd_open(pid)
    try:
        still = set(_members(d))
        for pid, fd in fds.items():
            if pid in still:
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(fd, signal.SIGKILL)
        return bool(fds)
    finally:
        for fd in fds.values():
            os.close(fd)


def _count(path: Path, key: str) -> int:
    """A counter of a cgroup's ``key value`` lines file (0 when the file or the key is not there)."""
    try:
        for line in path.read_text().splitlines():
            k, _, v = line.partition(" ")
            if k == key:
                return int(v)
    except (OSError, ValueError):
        pass
    return 0
