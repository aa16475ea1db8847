"""Reading a config file: a regular file of bounded size in UTF-8 holding one JSON object without a key given
twice or a number that is not finite, or a clear error naming it (and the line).

Why: the path comes from ``-c`` or ``$SENTINEL_CONFIG`` and may name anything: a FIFO (a plain open waits
for a writer forever), ``/dev/zero`` (a whole read never ends), a huge file or bytes that are not UTF-8.
Each ends here as a ConfigError naming the file and the problem, never a hang, a MemoryError or a traceback.
"""

from __future__ import annotations

import errno
import json
import math
import os
from pathlib import Path
from typing import Any

from sentinel_mcp.config_json_mistakes import json_mistake
from sentinel_mcp.core.errors import ConfigError
from sentinel_mcp.core.outside_file import NotUtf8, TooLarge, open_regular, read_to, utf8_text

MAX_CONFIG_BYTES = 4 * 1024 * 1024  # far above any real config (a big one is tens of KB)


def read_config_text(p: Path) -> str:
    try:
        fd, size = open_regular(p)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {p}") from None
    except OSError as e:
        if e.errno == errno.ENXIO:  # a FIFO, a socket, a directory, a device
            raise ConfigError(f"cannot read config file {p}: not a regular file") from None
        raise ConfigError(f"cannot read config file {p}: {e.strerror or e}") from None
    try:
        if size > MAX_CONFIG_BYTES:
            raise ConfigError(f"config file {p} is too large ({size} bytes; at most {MAX_CONFIG_BYTES})")
        data = read_to(lambda n: os.read(fd, n), MAX_CONFIG_BYTES)
    except TooLarge:
        raise ConfigError(f"config file {p} is too large (more than {MAX_CONFIG_BYTES} bytes)") from None
    except OSError as e:
        raise ConfigError(f"cannot read config file {p}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    try:
        text = utf8_text(data)
    except NotUtf8 as e:
        raise ConfigError(f"invalid config {p}, {e}") from None
    # a byte order mark, as Windows' editors save UTF-8: JSON lets a reader pass over it (RFC 8259, 8.1)
    return text.removeprefix("\ufeff")


def read_config_json(p: Path) -> Any:
    """The file's JSON, or a ConfigError naming the file, the line and the problem."""
    return parse_config_json(read_config_text(p), p)


def parse_config_json(text: str, p: Path) -> Any:
    """``text`` (the file ``p``'s) as JSON, or a ConfigError naming the file, the line and the problem."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_float=_finite,
                          parse_constant=_no_constant)
    except _NotFinite as e:
        line = _line_of(text, e.literal)
        raise ConfigError(f"invalid config {p}, line {line}: {e.literal} is not a finite number (a time, a "
                          "size or a count must be one)") from None
    except json.JSONDecodeError as e:
        line, column, problem = json_mistake(text, p, e)
        raise ConfigError(f"invalid JSON in {p}, line {line} column {column}: {problem}") from None
    except _DuplicateKey as e:
        raise ConfigError(f"invalid config {p}, line {_line_of_second(text, e.key)}: the key {e.key!r} is "
                          "given twice in one object (which one was meant is unknowable; JSON would keep the "
                          "last silently)") from None
    except RecursionError:
        raise ConfigError(f"invalid config {p}: nested too deep") from None
    except ValueError as e:  # Python's bound on int conversion (a number thousands of digits long)
        raise ConfigError(f"invalid config {p}: a number is too long ({e})") from None


class _NotFinite(ConfigError):
    def __init__(self, literal: str) -> None:
        super().__init__(literal)
        self.literal = literal


def _finite(literal: str) -> float:
    """A JSON number as a float, never an infinite one (``1e999`` reads as infinity: a timeout that never
    ends, a time to live that never passes)."""
    value = float(literal)
    if not math.isfinite(value):
        raise _NotFinite(literal)
    return value


def _no_constant(literal: str) -> float:
    raise _NotFinite(literal)  # NaN, Infinity, -Infinity: not JSON, though Python's reader takes them


def _line_of(text: str, literal: str) -> int:
    at = text.find(literal)
    return text.count("\n", 0, max(at, 0)) + 1


class _DuplicateKey(ConfigError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _line_of_second(text: str, key: str) -> int:
    """The line of the key's second appearance (where the duplicate most likely is)."""
    quoted = json.dumps(key)
    first = text.find(quoted)
    second = text.find(quoted, first + 1) if first >= 0 else -1
    return text.count("\n", 0, second if second >= 0 else max(first, 0)) + 1
