"""Who else on the machine may change or read the front's TLS files, and Sentinel's own as a client
(``client_context.py``: a server's ``ca``, Sentinel's ``cert`` and ``key``).

A CA bundle or CRL another account may write lets that account admit its own client certificates (or
un-revoke one); a certificate and key it may write let it serve as Sentinel. So such a file, or one in a
directory it may write (without the sticky bit), is refused, at start and on every reload. A key others may
read is only warned about: a directory of its own may protect it, as Debian's ``/etc/ssl/private`` does.
Every directory up to ``/`` is held to the same rule: whoever may write a grandparent may rename the parent
away and put a folder of their own in its place.
Links are followed (certbot's ``live/`` names point into ``archive/``): the file read is the one judged, and
the directory of every link on the way as well as the target's (``core/trusted_path.py`` walks the path).

The owner of a file may rewrite it whatever its mode, and the owner of any directory on its path may rename
what the directory holds and put its own in its place. So a file, or a directory on the path of the file or
of the link naming it, owned by another account than root and the gateway's own is refused too, naming the
owner.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sentinel_mcp.core.trusted_path import replaceable_by_others

__all__ = ["not_a_file", "readable_by_others", "replaceable_by_others"]


def not_a_file(path: Path) -> str | None:
    """Why ``path`` is no file to read a certificate, key or CA from (a FIFO's open waits for a writer for
    ever, holding the gateway's start or every connect to an upstream; a device is read without end), or
    None (a missing one: the reader says so). ``stat`` follows links and never waits on a FIFO."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return None if stat.S_ISREG(st.st_mode) else f"{path} is not a regular file (a FIFO, device or directory)"


def readable_by_others(path: Path) -> bool:
    try:
        return bool(os.stat(path).st_mode & 0o004)
    except OSError:
        return False
