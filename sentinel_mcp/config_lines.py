"""The line of each value in a config file's JSON, so that an error names the line as well as the key.

Why: a key's path alone (``sentinel.policy.query_seconds``) is slow to find in a long file, and a name can
repeat in other objects. Python's JSON reader keeps no positions, so the text is walked once more here (it
already parsed: this walk only records where each object member and list item starts). A line is a help,
never a new failure: text this walk cannot follow gives no lines, and the error is said without one.
"""

from __future__ import annotations

import bisect
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Iterable

Path = tuple[str | int, ...]
Lines = dict[Path, int]

_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")
_UNION_TAGS = frozenset(("stdio", "remote"))  # a server model's union branch: a step of the loc, not a key


def value_lines(text: str) -> Lines:
    """Each path (object keys and list indices) -> the 1-based line where its key or item starts."""
    out: Lines = {}
    try:
        _Walk(text, out).value(0, ())
    except (ValueError, IndexError, RecursionError):
        return {}
    return out


def line_of(lines: Lines | None, loc: Iterable[str | int]) -> int | None:
    """The line of a validation error's location (pydantic's ``loc``, with its function and union steps), or
    None when it does not name one place of the file (a key a host's other shape renamed)."""
    if not lines:
        return None
    path: Path = ()
    for part in loc:
        if isinstance(part, str) and part.startswith(("function-", "tagged-union")):
            continue
        if path + (part,) in lines:
            path = path + (part,)
        elif part not in _UNION_TAGS:
            return None
    return lines.get(path) if path else None


def at_line(problem: str, line: int | None) -> str:
    """A problem with its line, as an error says it: ``sentinel.http.port: ... (line 12)``."""
    return problem if line is None else f"{problem} (line {line})"


class _Walk:
    def __init__(self, text: str, out: Lines) -> None:
        self.text, self.out = text, out
        self.breaks = [m.start() for m in re.finditer("\n", text)]

    def line(self, i: int) -> int:
        return bisect.bisect_left(self.breaks, i) + 1

    def ws(self, i: int) -> int:
        m = _WS.match(self.text, i)
        return m.end() if m else i

    def value(self, i: int, path: Path) -> int:
        t = self.text
        i = self.ws(i)
        c = t[i]
        if c == "{":
            i = self.ws(i + 1)
            if t[i] == "}":
                return i + 1
            while True:
                i = self.ws(i)
                if t[i] != '"':
                    raise ValueError("a key was expected")
                key, j = scanstring(t, i + 1)
                self.out.setdefault(path + (key,), self.line(i))
                j = self.ws(j)
                if t[j] != ":":
                    raise ValueError("':' was expected")
                i = self.ws(self.value(j + 1, path + (key,)))
                if t[i] == ",":
                    i += 1
                elif t[i] == "}":
                    return i + 1
                else:
                    raise ValueError("',' or '}' was expected")
        if c == "[":
            i, n = self.ws(i + 1), 0
            if t[i] == "]":
                return i + 1
            while True:
                i = self.ws(i)
                self.out.setdefault(path + (n,), self.line(i))
                i = self.ws(self.value(i, path + (n,)))
                n += 1
                if t[i] == ",":
                    i += 1
                elif t[i] == "]":
                    return i + 1
                else:
                    raise ValueError("',' or ']' was expected")
        if c == '"':
            return scanstring(t, i + 1)[1]
        m = _SCALAR.match(t, i)
        if m is None:
            raise ValueError("a value was expected")
        return m.end()
