"""A gateway not run as root gives its tools the namespaces through a user namespace of their own.

Not root, the gateway can neither change its tools' user nor make them namespaces: each tool had the socket
filter only, and saw the machine's network (the filter aside), its /tmp, /var/tmp and /dev/shm (shared with
every other tool), and every process of the machine in /proc. Where the kernel lets an unprivileged user make
a user namespace (``user.max_user_namespaces`` above 0; Debian's ``kernel.unprivileged_userns_clone`` not 0;
no AppArmor or seccomp rule of the machine's against it), the supervisor takes one (``own_user``, before it
forks the tool's first process): the tool's uid in it is ``INNER`` (never 0: its capabilities in the namespace
end at its exec), mapped to the gateway's own outside, and no group may be set. Within it the root gateway's
route is followed: a network namespace, its own view of the files (``tool_files.py``), an IPC namespace, a pid
namespace and its /proc (``tool_pids.py``); the filter then refuses the tool any namespace of its own.

What it does not give: outside the namespace the tool is still the gateway's uid. Its view of the files
holds the machine's system directories only (``tool_files.py``): the gateway's home, data dir, config and
keys are not in it, but a file of the gateway's user under ``/etc`` or ``/usr`` would be readable; and two
tools at once share that uid for the kernel (each sees neither the other's processes nor its /tmp, but a
file one leaves world-readable in a workspace the other may read).

The supervisor loads this file by its path (standard library only). ``users_here`` tries it once, by a child.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys

_CLONE_NEWUSER = 0x10000000
INNER = 1000  # the tool's uid (and gid) in its user namespace


def own_user() -> None:
    """Move this process into a new user namespace, its uid and gid there ``INNER`` (the gateway's own
    outside), with every capability in it until it execs. OSError when it could not."""
    uid, gid = os.geteuid(), os.getegid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWUSER) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"no user namespace could be made: {os.strerror(e)}")
    maps = (("setgroups", "deny"), ("uid_map", f"{INNER} {uid} 1"), ("gid_map", f"{INNER} {gid} 1"))
    for name, text in maps:
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


@functools.cache
def users_here() -> bool:
    """Whether this gateway (not root) may give its tools namespaces through a user namespace: the whole of
    it tried once, by a child."""
    if not sys.platform.startswith("linux") or os.geteuid() == 0:
        return False
    from sentinel_mcp.swarm.tried_by_child import probe_passes  # (this file also runs by path: imported here)

    return probe_passes(__file__)


def users_said(own: bool) -> str:
    if own:
        return (
            f"each tool in a user namespace of its own (uid {INNER} in it, the gateway's own outside): its "
            "network, files view, processes and IPC separated as a root gateway's are; the gateway's own "
            "files outside the system directories are not in its view"
        )
    return (
        "no user namespace for the tools (the gateway is not root, and this machine refuses unprivileged "
        "user namespaces): each has the socket filter only, and shares the machine's network namespace, "
        "/tmp, /var/tmp, /dev/shm, System V IPC and every process's view in /proc"
    )


def _probe() -> int:
    import importlib.util

    def load(name: str):  # type: ignore[no-untyped-def]
        spec = importlib.util.spec_from_file_location(
            f"_probe_{name}", os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    files, network, pids = load("tool_files"), load("tool_network"), load("tool_pids")
    os.close(os.pidfd_open(os.getpid()))  # how the namespace's init asks whether the supervisor is there
    own_user()
    pids.own_pids()

    def tried(d: str) -> None:
        network.own_network()
        files.own_files(d, [], files.PROBE_DISK_BYTES)
        pids.own_proc()
        with open("/tmp/.probe", "w"):
            pass
        if os.getuid() != INNER or os.getpid() != 1:
            raise OSError("not the namespace's init, or not its user")

    return int(files.probe_dir(tried))


if __name__ == "__main__":  # the probe of ``users_here``
    try:
        sys.exit(_probe())
    except OSError:
        sys.exit(1)
