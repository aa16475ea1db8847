"""Whether another account could change what a path names, found by walking the path as the kernel does.

The name is resolved one component at a time from ``/`` through descriptors (``openat``, never the name
again), so every directory a name is looked up in is the one judged, and the file judged is the one opened:

- each directory looked up in (``/`` and every one on the way, through every link, a link's own directory
  included, however long the chain) is owned by root or by this account, and no other account or group may
  write it unless it has the sticky bit, as ``/tmp`` (as OpenSSH's StrictModes): whoever may write one can
  rename what it holds and put their own in its place, or point a link there at their own file;
- in a sticky directory, an entry's own owner may still remove it and put another in its place: each link
  followed and each folder passed there is this account's or root's too;
- the file (or folder) at the end is opened without following a link, and judged on the open descriptor: it
  is owned by root or by this account, and no other account or group may write it. A file swapped between
  the check and the use cannot be taken: the check is of the descriptor the reader reads.

A group write bit counts only for another group than this account's own (a private group, umask 002). A
POSIX ACL (``setfacl -m u:bob:rwx``) is read too: its named users and groups may write what the mode bits do
not show (a folder ``drwxrwxr-x+`` of root's own group reads as written by root's group alone).
"""

from __future__ import annotations

import errno
import os
import pwd
import stat
import struct
from collections import deque
from dataclasses import dataclass

MAX_LINKS = 40  # as Linux's own bound on links followed in one lookup (ELOOP past it)
_DIR = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC  # NONBLOCK: a planted FIFO never waits
LOOK = getattr(os, "O_PATH", READ) | os.O_CLOEXEC  # only looked at: no open of a FIFO or device at all


def foreign_write(st: os.stat_result) -> bool:
    # group write counts only for another group than this user's own (a private group, umask 002, is fine)
    return bool(st.st_mode & 0o002 or (st.st_mode & 0o020 and st.st_gid != os.getegid()))


def foreign_owner(st: os.stat_result) -> bool:
    return st.st_uid not in (0, os.geteuid())


_ACL_XATTR = "system.posix_acl_access"
_ACL_USER, _ACL_GROUP_OBJ, _ACL_GROUP, _ACL_MASK = 0x02, 0x04, 0x08, 0x10
_WRITE = 0o2


def acl_writer(fd: int, st: os.stat_result) -> str | None:
    """Another account or group a POSIX ACL on ``fd``'s file lets write it (the mask applied), or None.
    Read through ``/proc/self/fd`` (an ``O_PATH`` descriptor has no ``fgetxattr``); no ACL, no ``/proc`` or
    a file system without ACLs: None (the mode bits are then the whole answer)."""
    try:
        raw = os.getxattr(f"/proc/self/fd/{fd}", _ACL_XATTR)
    except OSError:
        return None
    if len(raw) < 4 or (len(raw) - 4) % 8:
        return "an ACL this check cannot read"  # unreadable: not known to be safe
    entries = [struct.unpack_from("<HHI", raw, at) for at in range(4, len(raw), 8)]
    mask = next((perm for tag, perm, _id in entries if tag == _ACL_MASK), 0o7)
    for tag, perm, ident in entries:
        if not perm & mask & _WRITE:
            continue
        if tag == _ACL_USER and ident not in (0, os.geteuid()):
            return f"user {owner_name(ident)} (ACL)"
        if tag == _ACL_GROUP and ident != os.getegid():
            return f"group {ident} (ACL)"
        if tag == _ACL_GROUP_OBJ and st.st_gid != os.getegid():
            return f"group {st.st_gid} (ACL)"
    return None


def owner_name(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def ownership_fix() -> str:
    return f"make it owned by root or by the gateway's own account, {owner_name(os.geteuid())} (chown)"


def file_problem(shown: str, st: os.stat_result, fd: int | None = None) -> str | None:
    """Why another account could change the file (or folder) itself, judged on its ``stat`` (and the ACL of
    ``fd``, when given), or None."""
    writer = acl_writer(fd, st) if fd is not None else None
    if writer is not None:
        return f"{shown} may be written by {writer}; make it setfacl -b and chmod go-w"
    if foreign_write(st):
        return (f"{shown} may be written by group or others (mode {stat.S_IMODE(st.st_mode):04o}); "
                "make it chmod go-w")
    if foreign_owner(st):
        return (f"{shown} is owned by another account, {owner_name(st.st_uid)}, which may rewrite it; "
                f"{ownership_fix()}")
    return None


def _folder_problem(shown: str, st: os.stat_result, name: str, fd: int) -> str | None:
    sticky = st.st_mode & stat.S_ISVTX
    writer = None if sticky else acl_writer(fd, st)
    if writer is not None:
        return (f"{shown} may be written by {writer}, so {name} could be replaced; make the directory "
                "setfacl -b and chmod go-w")
    if foreign_write(st) and not sticky:
        return (f"{shown} may be written by group or others (mode {stat.S_IMODE(st.st_mode):04o}), "
                f"so {name} could be replaced; make the directory chmod go-w")
    if foreign_owner(st):
        return (f"{shown} is owned by another account, {owner_name(st.st_uid)}, so {name} could be "
                f"replaced; {ownership_fix()}")
    return None


def _entry_problem(shown: str, folder: os.stat_result, entry: os.stat_result, name: str) -> str | None:
    # a sticky folder lets an entry's owner (besides the folder's) remove it and put its own in its place
    if folder.st_mode & stat.S_ISVTX and foreign_owner(entry) and entry.st_uid != folder.st_uid:
        return (f"{shown} is owned by another account, {owner_name(entry.st_uid)}, in a sticky directory "
                f"where its owner may replace it, so {name} could be replaced; {ownership_fix()}")
    return None


def _join(folder: str, name: str) -> str:
    return folder.rstrip("/") + "/" + name


@dataclass
class Walked:
    fd: int  # the descriptor of what the path names, opened with the walk's flags (the caller closes it)
    stat: os.stat_result  # of ``fd``
    real: str  # the path with every link resolved, as shown in messages
    why: str | None  # the first reason another account could change it, or None


def walk(path: str | os.PathLike[str], flags: int = LOOK) -> Walked:
    """Open what ``path`` names (the last component opened with ``flags`` and ``O_NOFOLLOW``), judging every
    directory looked up in, every link followed, and the descriptor opened (module doc). ``OSError`` when
    the path cannot be followed (missing, a loop, not a directory on the way); the reason is in ``why``."""
    name = os.path.basename(os.path.normpath(os.fspath(path))) or "/"
    given = os.fspath(path)
    # not abspath: it drops "a/.." by the name alone, where the kernel goes up from where a link led
    parts = deque(p for p in os.path.join(os.getcwd(), given).split("/") if p)
    why: str | None = None
    stack: list[tuple[int, os.stat_result, str]] = []
    cur = os.open("/", _DIR)
    cur_st, shown = os.fstat(cur), "/"
    why = _folder_problem("/", cur_st, name, cur)
    links = 0
    try:
        if not parts:  # the path is "/" itself
            fd = os.open(".", flags & ~os.O_NOFOLLOW, dir_fd=cur)
            return Walked(fd, os.fstat(fd), "/", why)
        while parts:
            part = parts.popleft()
            if part in (".", ""):
                continue
            if part == "..":
                if stack:
                    os.close(cur)
                    cur, cur_st, shown = stack.pop()
                continue
            entry = os.lstat(part, dir_fd=cur)
            here = _join(shown, part)
            why = why or _entry_problem(here, cur_st, entry, name)
            if stat.S_ISLNK(entry.st_mode):
                links += 1
                if links > MAX_LINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), os.fspath(path))
                target = os.readlink(part, dir_fd=cur)
                if target.startswith("/"):  # from the root again: what was walked so far no longer counts
                    for fd_, _st, _shown in stack:
                        os.close(fd_)
                    stack.clear()
                    os.close(cur)
                    cur = os.open("/", _DIR)
                    cur_st, shown = os.fstat(cur), "/"
                    why = why or _folder_problem("/", cur_st, name, cur)
                parts.extendleft(reversed([p for p in target.split("/") if p]))
                if not parts:  # a link to "/" itself
                    parts.append(".")
                continue
            if parts:  # a folder on the way: opened, then judged on its descriptor
                nxt = os.open(part, _DIR, dir_fd=cur)
                nxt_st = os.fstat(nxt)
                if (nxt_st.st_dev, nxt_st.st_ino) != (entry.st_dev, entry.st_ino):
                    why = why or f"{here} changed while it was looked at"
                why = why or _folder_problem(here, nxt_st, name, nxt)
                stack.append((cur, cur_st, shown))
                cur, cur_st, shown = nxt, nxt_st, here
                continue
            fd = os.open(part, flags | os.O_NOFOLLOW, dir_fd=cur)
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != (entry.st_dev, entry.st_ino):
                why = why or f"{here} changed while it was looked at"
            return Walked(fd, st, here, why or file_problem(here, st, fd))
        # the path ended in "." or "..": what ``cur`` is
        fd = os.open(".", flags & ~os.O_NOFOLLOW, dir_fd=cur)
        st = os.fstat(fd)
        return Walked(fd, st, shown, why or file_problem(shown, st, fd))
    finally:
        os.close(cur)
        for fd_, _st, _shown in stack:
            os.close(fd_)


def replaceable_by_others(path: str | os.PathLike[str]) -> str | None:
    """Why another account could change what ``path`` names, or None (also when it cannot be followed:
    missing or unreadable, the reader says so)."""
    try:
        walked = walk(path)
    except OSError:
        return None
    os.close(walked.fd)
    return walked.why
