"""Reading a spec for ``sentinel-mcp swarm build``: a regular file (or stdin) of bounded size in UTF-8.

Why: the path may name anything: a FIFO (a plain open waits for a writer forever), ``/dev/zero`` (a whole
read never ends: 2.6 GB in 4.5 s, then a MemoryError), a huge file, or bytes that are not UTF-8 (a
traceback). Each ends as a ConfigError naming the spec and the problem.
"""

from __future__ import annotations

import errno
import os
from typing import BinaryIO

from sentinel_mcp.config import ConfigError
from sentinel_mcp.core.outside_file import NotUtf8, TooLarge, open_regular, read_to, utf8_text

# far above any valid spec (50 + 10 x 200 + 2,000 characters of text and its JSON)
MAX_SPEC_BYTES = 64 * 1024


def read_spec_text(path: str, stdin: BinaryIO | None = None) -> str:
    """The spec's text; ``-`` reads ``stdin`` (bounded the same way)."""
    where = "stdin" if path == "-" else path
    try:
        if path == "-":
            assert stdin is not None
            data = read_to(stdin.read, MAX_SPEC_BYTES)
        else:
            fd, _ = open_regular(path)
            try:
                data = read_to(lambda n: os.read(fd, n), MAX_SPEC_BYTES)
            finally:
                os.close(fd)
        return utf8_text(data)
    except TooLarge:
        raise ConfigError(f"spec {where} is too large (more than {MAX_SPEC_BYTES} bytes)") from None
    except NotUtf8 as e:
        raise ConfigError(f"spec {where}, {e}") from None
    except OSError as e:
        why = "not a regular file" if e.errno == errno.ENXIO else (e.strerror or str(e))
        raise ConfigError(f"cannot read spec {where}: {why}") from None
