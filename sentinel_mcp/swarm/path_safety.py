"""Path safety for generated files: checked when a plan is validated and again right before a write.

A plan path must be a plain relative POSIX path (no absolute path, no drive, no ``..``, no odd
characters). At write time the path is resolved against the workspace and refused if any existing
component is a symlink, so a link planted in the workspace cannot redirect a write outside it.

A project is opened where its user works, not only here: a path must also be one that Windows and
case-insensitive disks (macOS, Windows) can hold. No component is a device name Windows reserves (with any
extension) or ends in '.', and no two files of a plan differ only in case (there they are one file).
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from sentinel_mcp.core.errors import SwarmError

MAX_PATH_CHARS = 240
_COMPONENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
# the device names Windows reserves in every directory, whatever extension follows
_WINDOWS_DEVICES = re.compile(r"^(CON|PRN|AUX|NUL|COM[0-9]|LPT[0-9])$", re.IGNORECASE)


def reserved_name(name: str) -> bool:
    """Whether a file or directory name is a device Windows reserves (``nul``, ``Aux.kt``, ``COM1.xml``)."""
    return bool(_WINDOWS_DEVICES.fullmatch(name.split(".", 1)[0]))


def case_key(path: str) -> str:
    """What a case-insensitive disk takes ``path`` for: two paths with one key are one file there."""
    return path.casefold()


class UnsafePathError(SwarmError, ValueError):
    """A generated file path that would escape (or is not allowed in) the workspace."""


def check_relative_path(raw: str) -> PurePosixPath:
    """Validate a plan path and return it normalised; raise ``UnsafePathError`` saying why not."""
    if not isinstance(raw, str) or not raw.strip():
        raise UnsafePathError("empty file path")
    if len(raw) > MAX_PATH_CHARS:
        raise UnsafePathError(f"file path longer than {MAX_PATH_CHARS} characters")
    if "\x00" in raw or any(ord(c) < 32 for c in raw):
        raise UnsafePathError(f"file path {raw!r} contains control characters")
    if "\\" in raw:
        raise UnsafePathError(f"file path {raw!r} uses backslashes; use '/'")
    if raw.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", raw):
        raise UnsafePathError(
            f"file path {raw!r} is absolute; only paths relative to the project are allowed"
        )
    parts = raw.split("/")
    for part in parts:
        if part == "..":
            raise UnsafePathError(f"file path {raw!r} contains '..' (directory traversal)")
        if part in ("", "."):
            raise UnsafePathError(f"file path {raw!r} has an empty or '.' component")
        if not _COMPONENT.fullmatch(part):
            raise UnsafePathError(
                f"file path {raw!r}: component {part!r} has characters outside [A-Za-z0-9._-]"
            )
        if reserved_name(part) or part.endswith("."):
            raise UnsafePathError(
                f"file path {raw!r}: component {part!r} is a name Windows reserves (or drops its last '.')"
            )
    return PurePosixPath(*parts)


def resolve_inside(root: Path, raw: str) -> Path:
    """The absolute target of ``raw`` under ``root``, refusing symlinks on the way (write-time check)."""
    rel = check_relative_path(raw)
    root_real = root.resolve(strict=True)
    current = root_real
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            raise UnsafePathError(f"file path {raw!r}: {current.relative_to(root_real)} is a symlink")
        if current.exists() and current != root_real / rel and not current.is_dir():
            raise UnsafePathError(f"file path {raw!r}: {current.relative_to(root_real)} is not a directory")
    target = root_real / rel
    # belt and braces: the fully resolved parent must still be inside the workspace
    parent = target.parent.resolve() if target.parent.exists() else target.parent
    if not parent.is_relative_to(root_real):
        raise UnsafePathError(f"file path {raw!r} resolves outside the workspace")
    return target
