"""Whether the unprivileged tool user can run a tool where it was found.

A root gateway runs its tools as an unprivileged uid (``tool_user.py``); a tool put where only root can read
(under ``/root``, a checkout in an owner-only directory) would then fail at every build and be reported as a
tool's own failure. It is judged here once, when the toolchain is found, from the modes on the way (owner,
group or other bits as they apply to that user with no supplementary groups; ACLs are not read, so a path
only an ACL opens is taken as closed: the check is then said as not made, never made wrongly)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sentinel_mcp.swarm.tool_user import ToolUser


def _allows(st: os.stat_result, user: ToolUser, bit_user: int, bit_group: int, bit_other: int) -> bool:
    if st.st_uid == user.uid:
        return bool(st.st_mode & bit_user)
    if st.st_gid == user.gid:
        return bool(st.st_mode & bit_group)
    return bool(st.st_mode & bit_other)


def unreachable(path: str, user: ToolUser | None, *, run: bool) -> str | None:
    """Why ``user`` cannot read (and, with ``run``, execute) ``path`` (its links resolved), or None. None too
    when there is no tool user (the gateway's own user runs its tools)."""
    if user is None:
        return None
    real = Path(os.path.realpath(path))
    try:
        for folder in reversed(real.parents):
            if not _allows(os.stat(folder), user, stat.S_IXUSR, stat.S_IXGRP, stat.S_IXOTH):
                return f"{folder} cannot be passed through by {user.name}"
        st = os.stat(real)
    except OSError as e:
        return f"{real} cannot be looked at ({e.strerror})"
    if not _allows(st, user, stat.S_IRUSR, stat.S_IRGRP, stat.S_IROTH):
        return f"{real} cannot be read by {user.name}"
    if run and not _allows(st, user, stat.S_IXUSR, stat.S_IXGRP, stat.S_IXOTH):
        return f"{real} cannot be run by {user.name}"
    return None
