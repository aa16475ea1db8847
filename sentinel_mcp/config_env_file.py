"""A server's ``envFile``: a dotenv file of ``KEY=value`` lines, read as an editor shows it.

Why: its values are what an upstream is started with (often its credentials), so a line means one value or it
is an error naming the file and the line, never a silent choice. A key given twice is refused (which was meant
is unknowable; the last won, silently); a quoted value ends at its closing quote (a comment may follow: the
quotes were kept before); a NUL cannot be in any process's environment; and a line is what ends in a line
feed, as editors number them: a character some editors (and Python's ``splitlines``) break a line at is
refused, since ``A=x<U+2028>B=y`` could set a ``B`` that one reader shows inside A's value. A UTF-8 BOM, as
Windows' editors write, is no character of the first key. A single-quoted value is taken as written: no
``${VAR}`` in it is expanded, as a shell and docker compose read it (``config_shapes`` expands the others).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sentinel_mcp.core.errors import ConfigError

ENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")
_AFTER_QUOTE = re.compile(r"\s*(?:#.*)?")
# what str.splitlines breaks a line at besides a line feed (a carriage return ending a line is allowed)
_BREAKS = frozenset("\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_BREAK_NAMES = {"\r": "a carriage return", "\x85": "a next-line character", "\u2028": "a line separator",
                "\u2029": "a paragraph separator"}


class EnvLineError(ConfigError):
    """A line of an env file that is not one ``KEY=value`` (the reader names the file and the key)."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(f"line {line} {problem}")
        self.line, self.problem = line, problem


@dataclass(frozen=True)
class EnvValue:
    value: str
    line: int
    literal: bool = False  # single-quoted: taken as written, no variable in it expanded


def env_values(text: str) -> dict[str, str]:
    """Each key of a dotenv text -> its value, or ``EnvLineError`` for the first line that is not one."""
    return {key: v.value for key, v in env_entries(text).items()}


def env_entries(text: str) -> dict[str, EnvValue]:
    """Each key of a dotenv text -> its value, line and quoting, or ``EnvLineError`` for the first line that
    is not one."""
    values: dict[str, EnvValue] = {}
    for number, line in enumerate(text.removeprefix("\ufeff").split("\n"), 1):
        line = line.removesuffix("\r")
        _no_hidden_break(line, number)
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = ENV_LINE.match(line)
        if m is None:
            raise EnvLineError(number, "is not KEY=value")
        key = m.group(1)
        if key in values:
            raise EnvLineError(number, f"gives {key} twice (first at line {values[key].line}): which one was "
                                       "meant is unknowable; remove one")
        raw = m.group(2)
        values[key] = EnvValue(_value(raw, number), number, raw.startswith("'"))
    return values


def _no_hidden_break(line: str, number: int) -> None:
    if "\x00" in line:
        raise EnvLineError(number, "contains a NUL character (no process's environment can hold one)")
    for column, ch in enumerate(line, 1):
        if ch in _BREAKS:
            name = _BREAK_NAMES.get(ch, "a control character")
            raise EnvLineError(number, f"holds U+{ord(ch):04X} ({name}) at column {column}: some editors "
                                       "break the line there, so it reads otherwise than it shows; remove it")


def _value(raw: str, number: int) -> str:
    """``raw`` (the text after ``=``, trimmed): a quoted value ends at the first quote of its kind that
    nothing but a comment follows (``"say "hi""`` is ``say "hi"``); an unquoted one at `` #``."""
    if raw[:1] in ("'", '"'):
        quote = raw[0]
        for end in range(1, len(raw)):
            if raw[end] == quote and _AFTER_QUOTE.fullmatch(raw, end + 1):
                return raw[1:end]
        raise EnvLineError(number, f"opens a value with {quote} and does not close it (only a # comment may "
                                   "follow the closing quote)")
    if " #" in raw:
        return raw.split(" #", 1)[0].rstrip()
    return raw
