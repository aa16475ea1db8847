"""A verification tool has no network: it may open no socket, and (a root gateway) it has a network namespace
of its own.

A tool runs code that came with what the models wrote (a build step's plugins, a parser's bugs): with sockets
it could reach the gateway's own HTTP port and console on 127.0.0.1, PostgreSQL (a world-connectable unix
socket), the cloud's metadata address, or send the generated sources away. So the tool's first process, on
Linux, installs a seccomp filter before it runs the tool, kept by all it starts: ``socket()`` fails (every
family: TCP, UDP, unix sockets by path or abstract, netlink, raw), as does ``io_uring_setup`` (whose
operations open sockets without that call) and any call through another ABI than the machine's own (x32,
i386's ``socketcall``). ``socketpair`` stays: its two ends reach nothing but each other. A JVM and aapt run
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
import subprocess
import sys

_CLONE_NEWNET = 0x40000000
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
# classic BPF, as seccomp reads it: load a word of ``struct seccomp_data``, compare, return
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_NR, _ARCH = 0, 4  # offsets in seccomp_data
_X32_BIT = 0x40000000

# machine: (its audit arch, socket, io_uring_setup)
_CALLS = {
    "x86_64": (0xC000003E, 41, 425),
    "aarch64": (0xC00000B7, 198, 425),
}


def filter_here() -> bool:
    """Whether the tools' socket filter is installed on this machine (Linux, an architecture known here)."""
    return sys.platform.startswith("linux") and platform.machine() in _CALLS


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def _program() -> bytes:
    arch, socket_nr, uring_nr = _CALLS[platform.machine()]
    return b"".join(
        [
            _op(_LD_W_ABS, _ARCH),
            _op(_JEQ_K, arch, 1, 0),
            _op(_RET_K, _ERRNO | errno.ENOSYS),  # another ABI (i386 through int 0x80, arm32): nothing
            _op(_LD_W_ABS, _NR),
            _op(_JGE_K, _X32_BIT, 0, 1),
            _op(_RET_K, _ERRNO | errno.ENOSYS),  # x32's numbers (the same calls, another numbering)
            _op(_JEQ_K, socket_nr, 0, 1),
            _op(_RET_K, _ERRNO | errno.EACCES),
            _op(_JEQ_K, uring_nr, 0, 1),
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
    try:
        tried = subprocess.run(
            [sys.executable, "-I", "-S", os.path.abspath(__file__)], capture_output=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return tried.returncode == 0


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
