"""A uid of its own for each running verification tool (a root gateway), leased from a configured range.

Every tool ran as ``nobody``: two tools at once (two builds', or two gateways' on the machine) could signal
each other, trace each other (ptrace: same uid; no Yama here) and so rewrite another build's verdict, read
each other's workspace and what the other wrote anywhere. A uid of its own per run closes all of these: the
kernel's own checks between users. Kept ``nobody`` with each workspace root's own and reached through an fd,
the tools would still share a uid for signals and ptrace: that alone is the hole.

A uid is leased, machine-wide, by an exclusive ``flock`` on a file named for it in a root-only directory
(held for the tool's run, freed by the kernel when the gateway dies), and only when no process runs with it
(a dead gateway's tool still running) and no account or group has it (its files would be the tool's). Its
gid is the same number: a group of its own, no other. Each lease starts at a random place in the range, so a
uid comes back rarely.

The directory holds only the files of leases held, and of a dead gateway's: a lease's file is removed by its
holder, still locked, when it ends; one left by a gateway killed is removed by a later lease (each looks at
up to ``_SWEPT`` files). A lease whose file was removed between its open and its lock (another lease's end)
is not one: the file locked must still be the one its name holds.
"""

from __future__ import annotations

import contextlib
import fcntl
import grp
import itertools
import os
import pwd
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from sentinel_mcp.swarm.tool_user import NoToolUser

LEASE_DIR = Path("/run/sentinel-tool-uids")
_SWEPT = 64  # files looked at by each lease, removed when no one holds them (their gateway is gone)


@dataclass
class UidLease:
    uid: int
    fd: int | None
    path: Path | None = None

    def release(self) -> None:
        if self.fd is not None:
            if self.path is not None:  # removed while still locked: no other lease holds this file
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
            os.close(self.fd)
            self.fd = None


def lease_uid(first: int, count: int, lease_dir: Path = LEASE_DIR) -> UidLease:
    """A uid of ``first`` .. ``first + count - 1`` no other tool holds or runs as (``NoToolUser``: none)."""
    _own_dir(lease_dir)
    _sweep(lease_dir)
    running = _uids_running()
    start = secrets.randbelow(count)
    for i in range(count):
        uid = first + (start + i) % count
        if uid in running or _has_account(uid):
            continue
        fd = _locked(lease_dir / str(uid), create=True)
        if fd is None:
            continue
        return UidLease(uid, fd, lease_dir / str(uid))
    raise NoToolUser(f"no uid of {first}..{first + count - 1} is free (each held by a running tool)")


def _locked(path: Path, create: bool = False) -> int | None:
    """An fd of ``path`` exclusively locked, and still the file ``path`` names; None when another holds it,
    or it was removed or replaced meanwhile."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_CREAT if create else 0), 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held, named = os.fstat(fd), os.lstat(path)
        if (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _sweep(d: Path) -> None:
    """Remove up to ``_SWEPT`` lease files no one holds (left by a gateway that was killed)."""
    with contextlib.suppress(OSError), os.scandir(d) as entries:
        for entry in itertools.islice(entries, _SWEPT):
            fd = _locked(d / entry.name)
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.unlink(d / entry.name)
                os.close(fd)


def _own_dir(d: Path) -> None:
    """The leases' directory: made root-only, and refused unless it is root's own (a directory another user
    made or may write could hold leases it forged)."""
    with contextlib.suppress(FileExistsError):
        d.mkdir(mode=0o700)
    st = os.lstat(d)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
        raise NoToolUser(f"{d} is not a directory only root may write")


def _has_account(uid: int) -> bool:
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(uid)
        except KeyError:
            continue
        return True
    return False


def _uids_running() -> set[int]:
    """Every uid (real, effective, saved, filesystem) a process of this machine runs with, from /proc."""
    found: set[int] = set()
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/status") as f:
                    for line in f:
                        if line.startswith("Uid:"):
                            found.update(int(u) for u in line.split()[1:])
                            break
            except (OSError, ValueError):
                continue
    return found
