"""A verification tool has no network: it may open no socket, and (a root gateway) it has a network namespace
of its own.

A tool runs code that came with what the models wrote (a build step's plugins, a parser's bugs): with sockets
it could reach the gateway's own HTTP port and console on 127.0.0.1, PostgreSQL (a world-connectable unix
socket), the cloud's metadata address, or send the generated sources away. So the tool's first process, on
Linux, installs a seccomp filter before it runs the tool, kept by all it starts: ``socket()`` fails (every
family: TCP, UDP, unix sockets by path or abstract, netlink, raw), as does ``io_uring_setup`` (whose
operations open sockets without that call) and any call through another ABI than the machine's own (x32,
i386's ``socketcall``). ``socketpair`` stays: its two ends reach nothing but each other. The same filter
refuses new namespaces (``unshare``, ``setns``, ``clone`` with a namespace flag; ``clone3``, whose flags it
cannot read, is "not implemented", so libc uses clone): a user namespace would give the tool root within it
(mounts, its own network set-up, the kernel's CAP_SYS_ADMIN code); and mounts, ``ptrace``, ``bpf``,
``perf_event_open``, ``userfaultfd`` and the key calls (``_REFUSED`` says why each). A JVM and aapt run
no socket of their own. A root gateway also gives the tool a new network namespace before it drops its user:
only a loopback of its own, down (127.0.0.1 is not the host's), should the filter ever be lifted; where the
machine refuses the gateway one (a container without CAP_SYS_ADMIN: seen once, by a child) that is said.

The supervisor loads this file by its path (standard library only). Where the filter cannot be installed on
a machine that should take it, the tool is not run; a machine this has no filter for says so in each report.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
import struct
import sys

_CLONE_NEWNET = 0x40000000
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
# classic BPF, as seccomp reads it: load a word of ``struct seccomp_data``, compare, return
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in seccomp_data (the first argument's low word: little-endian)
_X32_BIT = 0x40000000
# clone's flags that make a namespace (mount, cgroup, UTS, IPC, user, pid, network): a fork has none
_CLONE_NAMESPACES = 0x7E020000

# the calls a tool is refused (their numbers per machine in ``_NUMBERS``):
#   socket: any network (above); io_uring_setup: its operations open sockets without that call
#   unshare, setns: a namespace of its own or another's (a user namespace is "root" in it: mounts, network
#     set-up, the kernel's code behind CAP_SYS_ADMIN open to it); clone with a namespace flag, the same
#   mount, the new mount API, umount2, pivot_root: another view of the files (reached through a userns)
#   ptrace, process_vm_*: its own children (another tool's are another uid's)
#   bpf, perf_event_open, userfaultfd, keyctl, add_key, request_key: kernel interfaces no JVM or aapt uses,
#     each a known way to local privilege escalation; the keys also a store kept for the uid across runs
# A deny list, not an allow list: a JVM's calls change with its version, GC and JIT (a call missing from an
# allow list is a crash at build time, read as "not checked"); parsing files needs only ordinary calls.
_REFUSED = (
    "socket", "io_uring_setup", "unshare", "setns", "mount", "umount2", "pivot_root", "open_tree",
    "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "ptrace", "process_vm_readv",
    "process_vm_writev", "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
)  # fmt: skip
_NUMBERS = {
    "x86_64": {
        "socket": 41, "io_uring_setup": 425, "unshare": 272, "setns": 308, "mount": 165, "umount2": 166,
        "pivot_root": 155, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
        "fsmount": 432, "fspick": 433, "mount_setattr": 442, "ptrace": 101, "process_vm_readv": 310,
        "process_vm_writev": 311, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "keyctl": 250,
        "add_key": 248, "request_key": 249, "clone": 56, "clone3": 435,
    },
    "aarch64": {
        "socket": 198, "io_uring_setup": 425, "unshare": 97, "setns": 268, "mount": 40, "umount2": 39,
        "pivot_root": 41, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
        "fsmount": 432, "fspick": 433, "mount_setattr": 442, "ptrace": 117, "process_vm_readv": 270,
        "process_vm_writev": 271, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "keyctl": 219,
        "add_key": 217, "request_key": 218, "clone": 220, "clone3": 435,
    },
}  # fmt: skip
# machine: its audit arch
_CALLS = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}


def filter_here() -> bool:
    """Whether the tools' socket filter is installed on this machine (Linux, an architecture known here)."""
    return sys.platform.startswith("linux") and platform.machine() in _CALLS


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def _program() -> bytes:
    arch, nr = _CALLS[platform.machine()], _NUMBERS[platform.machine()]
    refused = []
    for name in _REFUSED:
        why = errno.EACCES if name == "socket" else errno.EPERM
        refused += [_op(_JEQ_K, nr[name], 0, 1), _op(_RET_K, _ERRNO | why)]
    return b"".join(
        [
            _op(_LD_W_ABS, _ARCH),
            _op(_JEQ_K, arch, 1, 0),
            _op(_RET_K, _ERRNO | errno.ENOSYS),  # another ABI (i386 through int 0x80, arm32): nothing
            _op(_LD_W_ABS, _NR),
            _op(_JGE_K, _X32_BIT, 0, 1),
            _op(_RET_K, _ERRNO | errno.ENOSYS),  # x32's numbers (the same calls, another numbering)
            *refused,
            # clone3 passes its flags in memory the filter cannot read: "not here", libc falls back to clone
            _op(_JEQ_K, nr["clone3"], 0, 1),
            _op(_RET_K, _ERRNO | errno.ENOSYS),
            # clone: refused with a namespace flag only (glibc's fork, threads and posix_spawn have none)
            _op(_JEQ_K, nr["clone"], 0, 3),
            _op(_LD_W_ABS, _ARG0),
            _op(_JSET_K, _CLONE_NAMESPACES, 0, 1),
            _op(_RET_K, _ERRNO | errno.EPERM),
            _op(_RET_K, _ALLOW),
        ]
    )


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def seal() -> None:
    """Install the filter on this process (kept across exec and by every child); ``no_new_privs`` must be
    set (the kernel refuses it otherwise to a process without CAP_SYS_ADMIN). OSError when it was not."""
    code = _program()
    buf = ctypes.create_string_buffer(code, len(code))
    prog = _Prog(len(code) // 8, ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"the socket filter could not be installed: {os.strerror(e)}")


def own_network() -> None:
    """Move this process (root) into a new network namespace: only its own loopback, down. OSError when it
    could not."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"no network namespace could be made: {os.strerror(e)}")


@functools.cache
def namespaces_here() -> bool:
    """Whether this (root) process may give its tools a network namespace: tried once, by a child."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return False
    from sentinel_mcp.swarm.tried_by_child import probe_passes  # (this file also runs by path: imported here)

    return probe_passes(__file__)


def network_said(namespace: bool) -> str:
    """What a build's report says of its tools' network on this machine (``namespace``: each tool is given
    a network namespace of its own)."""
    if not filter_here() and not namespace:
        return (
            f"the tools can open network connections here (no socket filter for {sys.platform} "
            f"{platform.machine()}, no network namespace): the gateway's ports, the local network, the "
            "internet"
        )
    sockets = (
        "no socket can be opened by them or anything they start"
        if filter_here()
        else f"they can open sockets (no socket filter for {platform.machine()}): unix sockets by path too"
    )
    own = (
        "each in a network namespace of its own (its loopback only, down)"
        if namespace
        else "no network namespace of their own (the gateway is not root, or is refused one here)"
    )
    return f"no network for the tools: {sockets}; {own}"


if __name__ == "__main__":  # the probe of ``namespaces_here``
    try:
        own_network()
    except OSError:
        sys.exit(1)
