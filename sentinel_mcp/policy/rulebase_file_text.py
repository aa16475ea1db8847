"""A rulebase file read to show or share it (the console's page, ``sentinel://rulebase``, a published
version), by the loader's own bound.

Each of these reads the file at its path as it is now, which is not what was loaded: it may since have been
replaced by a FIFO (a plain open waits for a writer for ever, holding the page or the resource), a device
(read without end) or a file of gigabytes (read whole into memory). The loader refuses a file past
``clause_bounds.MAX_FILE_BYTES``; past it, these say so, naming the file, and read no further.
"""

from __future__ import annotations

import errno
import os

from sentinel_mcp.core.display_text import Marked, compose
from sentinel_mcp.core.errors import PolicyError
from sentinel_mcp.core.outside_file import TooLarge, read_regular_bytes
from sentinel_mcp.policy.clause_bounds import MAX_FILE_BYTES


class RulebaseFileUnreadable(PolicyError):
    """A rulebase file that cannot be read to show or share; the message names the file and why."""

    prefixed = False


def rulebase_file_bytes(path: str | os.PathLike[str]) -> bytes:
    """The file's bytes, at most ``MAX_FILE_BYTES``, else ``RulebaseFileUnreadable``."""
    try:
        return read_regular_bytes(path, MAX_FILE_BYTES)
    except TooLarge:
        why = f"more than {MAX_FILE_BYTES:,} bytes (the loader's bound)"
    except OSError as e:
        why = ("not a regular file (a FIFO, device or directory)" if e.errno == errno.ENXIO
               else str(e.strerror or "cannot be read"))
    raise RulebaseFileUnreadable(compose(os.fspath(path), Marked(f": unreadable: {why}")))


def rulebase_file_text(path: str | os.PathLike[str], *, strict: bool = False) -> str:
    """The file's text (bytes that are not UTF-8 replaced unless ``strict``: then ``UnicodeDecodeError``)."""
    return rulebase_file_bytes(path).decode("utf-8", errors="strict" if strict else "replace")


def shown_file_text(path: str | os.PathLike[str]) -> str:
    """The file's text to show, or a Prolog comment saying why it cannot be shown."""
    try:
        return rulebase_file_text(path)
    except RulebaseFileUnreadable as e:
        return f"% {e}"
