"""A verification tool's view of the files (a root gateway): all of it read-only but its workspace, and a
``/tmp``, ``/var/tmp`` and ``/dev/shm`` of its own, empty.

Each run has a uid of its own (``tool_uids.py``), but a uid comes back: what one run left in a world-writable
place (``/tmp/x``, a file in ``/dev/shm``) the next run leased that uid read, and any tool running at the same
time read what another made world-readable there (a channel between two builds). So the tool's first
process, as root before it drops its user, takes a mount namespace of its own (changes private to it, and
gone with its last process), makes every mount of it read-only (``mount_setattr``, recursive: no
world-writable directory anywhere is left to it, whatever the machine has) and mounts a fresh tmpfs on each
of those three (mode 1777, size-capped; its pages are charged to the tool's cgroup's memory too). The
directories it must reach under them are bound back, writable as before: the one it runs in (its
workspace, under ``/tmp``) and those of its program and the files the gateway runs it with (a jar, the
platform file). A JVM's temporary files (``hsperfdata``, native libraries it unpacks) go to the new ``/tmp``.
The same holds for System V and POSIX IPC objects (a shared memory segment outlives its process): the tool
has an IPC namespace of its own, gone with it.

The supervisor loads this file by its path (standard library only). A machine that refuses the namespace
(a container without CAP_SYS_ADMIN) is seen by ``files_here`` (tried once, by a child) and said.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys

_CLONE_NEWNS, _CLONE_NEWIPC = 0x00020000, 0x08000000
_MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 2, 4, 0x20, 0x1000, 0x4000, 0x40000
_AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = -100, 0x8000, 1
_MOUNT_SETATTR = {"x86_64": 442, "aarch64": 442}
# the world-writable places of a Linux machine's tools: each given empty, of the tool's own
PRIVATE = ("/tmp", "/var/tmp", "/dev/shm")
TMP_SIZE = "size=512m,nr_inodes=65536,mode=1777"


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _checked(r: int, what: str) -> None:
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def kept_dirs(programs: list[str]) -> list[str]:
    """The directories given back to a tool besides its workspace: those of its program and the files it is
    run with (a jar, the platform file), the gateway's own paths; never one the models wrote (a file named
    ``/tmp/other-build/A.kt`` would otherwise bring that directory into its view)."""
    found: list[str] = []
    for p in programs:
        d = os.path.realpath(os.path.dirname(os.path.abspath(p)))
        if d not in found:
            found.append(d)
    return found


def own_files(cwd: str, kept: list[str]) -> None:
    """Give this process (root) the view described above, for a tool run in ``cwd`` (then its working
    directory again: the old one is on the read-only mount) with ``kept`` given back (``kept_dirs``).
    OSError when any step fails (the tool is then not run)."""
    keep = [os.path.realpath(cwd), *kept]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
    libc.syscall.restype = ctypes.c_long
    # and an IPC namespace: System V shared memory, semaphores, message queues and POSIX queues outlive
    # their process (a segment of the uid's, left for its next run) and are shared by every tool otherwise
    _checked(libc.unshare(_CLONE_NEWNS | _CLONE_NEWIPC), "no mount or IPC namespace could be made")
    _checked(libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "mounts could not be made private")
    # reached before the places are covered: bound back from these
    under = [k for k in keep if any(k == p or k.startswith(p + "/") for p in PRIVATE)]
    held = {k: os.open(k, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC) for k in under}
    try:
        attr = _MountAttr(_MOUNT_ATTR_RDONLY, 0, 0, 0)
        nr = _MOUNT_SETATTR[os.uname().machine]
        _checked(
            libc.syscall(nr, _AT_FDCWD, b"/", _AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr)),
            "the files could not be made read-only",
        )
        for place in PRIVATE:
            if os.path.isdir(place) and not os.path.islink(place):
                _checked(
                    libc.mount(b"tmpfs", place.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, TMP_SIZE.encode()),
                    f"no {place} of its own could be mounted",
                )
        for k, fd in held.items():
            os.makedirs(k, mode=0o755, exist_ok=True)
            where = k.encode()
            bound = libc.mount(f"/proc/self/fd/{fd}".encode(), where, None, _MS_BIND, None)
            _checked(bound, f"{k} not bound")
            # a bind takes its source mount's read-only flag: made writable again (its modes still hold)
            _checked(
                libc.mount(None, where, None, _MS_REMOUNT | _MS_BIND | _MS_NOSUID | _MS_NODEV, None),
                f"{k} not made writable",
            )
    finally:
        for fd in held.values():
            os.close(fd)
    os.chdir(keep[0])


@functools.cache
def files_here() -> bool:
    """Whether this (root) process may give its tools such a view: tried once, by a child."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0 or os.uname().machine not in _MOUNT_SETATTR:
        return False
    from sentinel_mcp.swarm.tried_by_child import probe_passes  # (this file also runs by path: imported here)

    return probe_passes(__file__)


def files_said(private: bool) -> str:
    if private:
        return (
            "each tool sees the machine's files read-only but its workspace, with a /tmp, /var/tmp and "
            "/dev/shm of its own (empty, gone with it): nothing it writes outlives it or reaches another tool"
        )
    return (
        "the tools share the machine's /tmp, /var/tmp and /dev/shm (no mount namespace: the gateway is not "
        "root, or is refused one here): what one writes there another can read"
    )


if __name__ == "__main__":  # the probe of ``files_here``
    try:
        own_files("/", [])
        with open("/tmp/.probe", "w"):
            pass
    except OSError:
        sys.exit(1)
