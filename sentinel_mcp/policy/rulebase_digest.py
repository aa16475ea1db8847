"""A rulebase set's digest: what its version is made of, and the key of its load rehearsal. Apart from
``rulebase`` (the holder, its pydantic models and the Prolog engine) so that ``serve`` starts the rehearsal as
soon as the config is read, before those are imported (issue 21, cold start)."""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

from sentinel_mcp.core.outside_file import CHUNK, open_regular


def content_digest(files: list[Path]) -> str:
    """sha256 over the files' names and contents (the version is all of it). Only a regular file
    is read, in chunks: a FIFO named in a config would wait for a writer forever, /dev/zero never end (the
    digest of a refused set is taken too, to report it)."""
    h = hashlib.sha256()
    for f in files:
        h.update(str(f).encode() + b"\0")
        try:
            fd, _ = open_regular(f)
        except OSError as e:
            h.update(b"<not a regular file>" if e.errno == errno.ENXIO else b"<missing>")
        else:
            try:
                while chunk := os.read(fd, CHUNK):
                    h.update(chunk)
            except OSError:
                h.update(b"<unreadable>")
            finally:
                os.close(fd)
        h.update(b"\0")
    return h.hexdigest()


def set_digest(files: list[Path]) -> str:
    """``content_digest`` of a rulebase set: the configured files and every file they include (a set whose
    included file changed is another version, rehearsed again)."""
    from sentinel_mcp.policy.rulebase_includes import included_files  # it reads clause_bounds' bound

    return content_digest(included_files(files))


def bytes_digest(named: list[tuple[str, bytes]]) -> str:
    """``content_digest`` of files already read (each its name as the version names it, and its bytes): what a
    replica publishes is checked against the version it publishes it under with it."""
    h = hashlib.sha256()
    for name, data in named:
        h.update(name.encode() + b"\0" + data + b"\0")
    return h.hexdigest()
