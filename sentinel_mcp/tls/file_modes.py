"""Who else on the machine may change or read the front's TLS files, and Sentinel's own as a client
(``client_context.py``: a server's ``ca``, Sentinel's ``cert`` and ``key``).

A CA bundle or CRL another account may write lets that account admit its own client certificates (or
un-revoke one); a certificate and key it may write let it serve as Sentinel. So such a file, or one in a
directory it may write (without the sticky bit), is refused, at start and on every reload. A key others may
read is only warned about: a directory of its own may protect it, as Debian's ``/etc/ssl/private`` does.
Every directory up to ``/`` is held to the same rule: whoever may write a grandparent may rename the parent
away and put a folder of their own in its place.
Links are followed (certbot's ``live/`` names point into ``archive/``): the file read is the one judged, and
the directory of the link as well as the target's.

The owner of a file may rewrite it whatever its mode, and the owner of any directory on its path may rename
what the directory holds and put its own in its place. So a file, or a directory on the path of the file or
of the link naming it, owned by another account than root and the gateway's own is refused too, naming the
owner.
"""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path


def _foreign_write(st: os.stat_result) -> bool:
    # group write counts only for another group than this user's own (a private group, umask 002, is fine)
    return bool(st.st_mode & 0o002 or (st.st_mode & 0o020 and st.st_gid != os.getegid()))


def _foreign_owner(st: os.stat_result) -> bool:
    return st.st_uid not in (0, os.geteuid())


def _owner(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _ownership_fix() -> str:
    return f"make it owned by root or by the gateway's own account, {_owner(os.geteuid())} (chown)"


def not_a_file(path: Path) -> str | None:
    """Why ``path`` is no file to read a certificate, key or CA from (a FIFO's open waits for a writer for
    ever, holding the gateway's start or every connect to an upstream; a device is read without end), or
    None (a missing one: the reader says so). ``stat`` follows links and never waits on a FIFO."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return None if stat.S_ISREG(st.st_mode) else f"{path} is not a regular file (a FIFO, device or directory)"


def replaceable_by_others(path: Path) -> str | None:
    """Why another account could change what ``path`` holds, or None."""
    try:
        real = path.resolve(strict=True)
        st = os.stat(real)
    except OSError:
        return None  # missing or unreadable: the reader says so
    if _foreign_write(st):
        return (f"{real} may be written by group or others (mode {stat.S_IMODE(st.st_mode):04o}); "
                "make it chmod go-w")
    if _foreign_owner(st):
        return (f"{real} is owned by another account, {_owner(st.st_uid)}, which may rewrite it; "
                f"{_ownership_fix()}")
    # every directory up to the root, on the file's path and the link's (``stat`` follows a linked directory):
    # whoever may write one (without the sticky bit) can rename what it holds, a folder on the way included,
    # and put their own in its place, or point a link at their own file (as OpenSSH's StrictModes)
    for directory in dict.fromkeys((*real.parents, *Path(os.path.abspath(path)).parents)):
        try:
            dst = os.stat(directory)
        except OSError:
            continue
        if _foreign_write(dst) and not dst.st_mode & stat.S_ISVTX:
            return (f"{directory} may be written by group or others (mode {stat.S_IMODE(dst.st_mode):04o}), "
                    f"so {path.name} could be replaced; make the directory chmod go-w")
        if _foreign_owner(dst):
            return (f"{directory} is owned by another account, {_owner(dst.st_uid)}, so {path.name} could be "
                    f"replaced; {_ownership_fix()}")
    return None


def readable_by_others(path: Path) -> bool:
    try:
        return bool(os.stat(path).st_mode & 0o004)
    except OSError:
        return False
