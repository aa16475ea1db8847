"""The files a verification tool checks, written into its workspace, each name checked again first.

The names are the models' (a plan's paths, checked when the plan was validated). The toolchain is called with
whatever its caller holds, and it writes as the gateway (root): a name taken as it came could be absolute,
climb out with ``..``, hold a NUL or a look-alike slash, or be longer than a file name may be (written where
it pointed, directories made on the way, or the check broken by an exception). So each is checked here by the
plan's own rules (``path_safety``: plain relative components of ``[A-Za-z0-9._-]``, no link on the way, the
resolved parent inside the workspace) before anything is written; one refused is a BLOCKER of its own, and is
neither written nor given to the tool.
"""

from __future__ import annotations

import os
from pathlib import Path

from sentinel_mcp.swarm.messages import Issue
from sentinel_mcp.swarm.path_safety import UnsafePathError, check_relative_path, resolve_inside


def written(root: Path, files: dict[str, str], issues: list[Issue], under: str = "") -> list[str]:
    """Write each of ``files`` (name: text; each name starts with ``under``, taken off here) under ``root``;
    the names written, in order. A name refused adds a BLOCKER to ``issues``."""
    done: list[str] = []
    for name, text in files.items():
        try:
            rel = str(check_relative_path(name))
            if not rel.startswith(under) or rel == under.rstrip("/"):
                raise UnsafePathError(f"file path {name!r} is not under {under!r}")
            sub = rel.removeprefix(under)
            resolve_inside(root, sub).parent.mkdir(parents=True, exist_ok=True)
            target = resolve_inside(root, sub)  # again, its directories made: no link on the way
            # a link made there meanwhile is not followed (the gateway alone writes here: belt and braces)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except (UnsafePathError, OSError) as e:
            why = e if isinstance(e, UnsafePathError) else f"{type(e).__name__}: {e.strerror}"
            issues.append(Issue(severity="BLOCKER", file=name, message=f"file name refused: {why}"[:2000]))
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        done.append(name)
    return done
