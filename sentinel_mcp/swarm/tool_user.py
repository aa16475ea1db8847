"""Whom a verification tool runs as.

A tool parses what the models wrote (hostile input) with a large program (a JVM, aapt). Run as the gateway's
user, root here, it could leave its cgroup (its pid written to another cgroup's ``cgroup.procs``), kill its
supervisor, raise its own limits, read the owner's token files and the store, and write anywhere. So when the
gateway is root each tool runs as an unprivileged user: a uid of its own for the run, leased from
``sentinel.swarm.verify.tool_uid_first`` / ``tool_uid_count`` (``tool_uids.py``: no two tools at once share
one), or the one user ``sentinel.swarm.verify.tool_user`` names (shared by every run, said so):
no supplementary groups, ``no_new_privs`` set (a setuid program such as ``su``/``sudo`` cannot raise it
back), dropped by the supervisor's child once it is in the tool's cgroup, before it runs the tool. Of its
workspace that user is given the directory the tool runs in (the sources in it readable, its output
writable) and nothing else: the gateway's config, tokens, store and audit are the gateway's own (0600/0700).

Not root, the gateway cannot change user: its tools then run as its own user and can reach what that user
can (its files, its other processes); that is said in the build report.
"""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass
from pathlib import Path

from sentinel_mcp.core.errors import SwarmError

DEFAULT_TOOL_USER = "nobody"


class NoToolUser(SwarmError):
    """The gateway is root and the user its tools should run as is missing or privileged: no tool is run
    (run as root, it would have all of root's reach)."""


@dataclass(frozen=True)
class ToolUser:
    name: str
    uid: int  # a leased range's: its first uid (what reach is judged for: no file is any such uid's)
    gid: int
    leased: int = 0  # how many uids from ``uid`` each run leases one of (0: this one user for every run)

    def said(self) -> str:
        if self.leased:
            return (
                f"a uid of its own per run (of {self.uid}..{self.uid + self.leased - 1}, no account; its gid "
                "the same, no other groups, no_new_privs)"
            )
        return (
            f"{self.name} (uid {self.uid}, gid {self.gid}, no other groups, no_new_privs; shared by every "
            "tool run: tools running at once can signal, trace and read each other)"
        )


def tool_user(configured: str | None = None, leased: tuple[int, int] | None = None) -> ToolUser | None:
    """The user tools run as when the gateway is root; None when it is not (it cannot change user).
    ``leased``: (first uid, how many) each run leases one of, when no user is ``configured``."""
    if os.geteuid() != 0:
        return None
    if configured is None and leased is not None:
        return ToolUser("a uid of its own", leased[0], leased[0], leased[1])
    name = configured or DEFAULT_TOOL_USER
    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        raise NoToolUser(f"the tool user {name!r} does not exist") from None
    if pw.pw_uid == 0 or pw.pw_gid == 0:
        raise NoToolUser(f"the tool user {name!r} is privileged (uid {pw.pw_uid}, gid {pw.pw_gid})")
    return ToolUser(name, pw.pw_uid, pw.pw_gid)


def runs_as_said(user: ToolUser | None) -> str:
    if user is not None:
        others = ", and each other's," if user.leased else ""
        return (
            f"tools run as {user.said()}: the gateway's files, store and processes{others} out of their "
            "reach"
        )
    me = os.geteuid()
    try:
        name = pwd.getpwuid(me).pw_name
    except KeyError:
        name = str(me)
    return (
        f"tools run as the gateway's own user {name} (uid {me}; not root, it cannot change user): they can "
        "reach what that user can (its files; its other processes unless a pid namespace hides them), "
        "no_new_privs set"
    )


def give_workspace(root: Path, user: ToolUser | None) -> None:
    """The tool's directory, and what the gateway wrote in it, to ``user``: the one place it may read and
    write whatever the gateway's umask (the directories above it are untouched: /tmp's own modes hold). Links
    are not followed (the gateway wrote none; what is there is changed itself)."""
    if user is None:
        return
    for top, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            os.lchown(os.path.join(top, name), user.uid, user.gid)
    os.lchown(root, user.uid, user.gid)
    root.chmod(0o700)
