"""Bounds on a rulebase file's clauses, checked in Python before SWI-Prolog reads a byte of it.

SWI-Prolog's reader recurses on the C stack for each nested argument and prefix operator: a clause with a
term ~50,000 levels deep (``f(f(f(...)))`` or ``\\+ \\+ \\+ ...``, a 300 KB file) kills the whole process
with SIGSEGV, in ``check``, at start or on a hot reload. No honest rulebase comes near that, so a file is
refused, naming the file and the clause's line, when a clause nests brackets deeper than ``MAX_NESTING`` or
has more than ``MAX_CLAUSE_TOKENS`` tokens (a bound on any nesting, operators included), or the file is
larger than ``MAX_FILE_BYTES``. Quoted atoms, strings, character codes and comments are skipped as the
reader would skip them (``16'FF`` and ``0'a`` are numbers: their quote opens nothing).

That walk mirrors SWI-Prolog's lexer, and a second lexer drifts from the first. So a second count needs no
lexer at all: brackets outside comments, quoted ones included, nested deeper than ``MAX_RAW_NESTING`` are
refused too (it overestimates brackets written inside quotes only, far from any real rulebase). Neither is
the last line: ``load_rehearsal.py`` loads the files in a child SWI-Prolog before the gateway's engine does.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from sentinel_mcp.core.outside_file import NotUtf8, TooLarge, open_regular, read_to, utf8_text

MAX_FILE_BYTES = 32_000_000
MAX_CLAUSE_TOKENS = 20_000
MAX_NESTING = 1_000
MAX_RAW_NESTING = 5_000  # every bracket outside comments, quoted or not (no lexer: see above)
_SYMBOL = set("#$&*+-./:<=>?@^~\\")
_SOLO = set("()[]{},|!;")
_OPEN, _CLOSE = set("([{"), set(")]}")


def clause_problems(path: Path) -> list[tuple[int, str]]:
    """(line, problem) for each bound the file breaks (at most a few: the first one per kind stops it)."""
    try:
        # one open: a name checked by stat and read by another open may be a FIFO or far larger by then
        fd, size = open_regular(path)
    except OSError as e:  # a missing or unreadable file is reported by the loader
        return [(0, "not a regular file (a FIFO, device or directory)")] if e.errno == errno.ENXIO else []
    try:
        if size > MAX_FILE_BYTES:
            return [(0, f"the file is {size:,} bytes, more than {MAX_FILE_BYTES:,}")]
        data = read_to(lambda n: os.read(fd, n), MAX_FILE_BYTES)
    except TooLarge:
        return [(0, f"the file grew past {MAX_FILE_BYTES:,} bytes while it was read")]
    except OSError:
        return []
    finally:
        os.close(fd)
    try:
        text = utf8_text(data)
    except NotUtf8 as e:
        # SWI-Prolog reads such a byte as some character, silently (which one depends on the locale), and the
        # console's copy of the file cannot be decoded: a rulebase file is UTF-8 text (a UTF-8 BOM is UTF-8)
        return [(e.line, f"not UTF-8 text: byte 0x{e.byte:02x} at byte offset {e.offset} (save the file "
                         "as UTF-8)")]
    return text_problems(text)


def text_problems(text: str) -> list[tuple[int, str]]:
    return _clause_problems(text) or _raw_nesting_problems(text)


def _raw_nesting_problems(text: str) -> list[tuple[int, str]]:
    """The nesting of every bracket outside comments, with no notion of quotes, numbers or clauses (nothing
    of SWI-Prolog's lexer to mirror, nothing that resets the count): the line where it passes the bound."""
    depth, i, n = 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "%":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif ch == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            if ch in _OPEN:
                depth += 1
                if depth > MAX_RAW_NESTING:
                    return [(text.count("\n", 0, i) + 1, f"brackets nest more than {MAX_RAW_NESTING:,} deep "
                                                         "here (counting those inside quotes too)")]
            elif ch in _CLOSE and depth:
                depth -= 1
            i += 1
    return []


def _clause_problems(text: str) -> list[tuple[int, str]]:
    problems: list[tuple[int, str]] = []
    i, n, line = 0, len(text), 1
    start, tokens, depth, deepest = 1, 0, 0, 0

    def end_clause() -> None:
        nonlocal tokens, depth, deepest
        if tokens > MAX_CLAUSE_TOKENS:
            problems.append((start, f"the clause has more than {MAX_CLAUSE_TOKENS:,} tokens: split it (a "
                                    "long list of data belongs in facts, one per clause)"))
        elif deepest > MAX_NESTING:
            problems.append((start, f"the clause nests brackets more than {MAX_NESTING:,} deep"))
        tokens = depth = deepest = 0

    while i < n and not problems:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
        elif ch.isspace():
            i += 1
        elif ch == "%":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif ch == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
        elif ch in "'\"`":
            j = _quoted_end(text, i)
            line += text.count("\n", i, j)
            i, tokens = j, tokens + 1
        elif ch.isalnum() or ch == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            i, tokens = _number_tail(text, i, j), tokens + 1
        elif ch in _SYMBOL:
            j = i
            while j < n and text[j] in _SYMBOL:
                j += 1
            if text[i:j] == "." and (j >= n or text[j].isspace() or text[j] == "%"):
                tokens += 1
                end_clause()
                start = line + (0 if j >= n or text[j] != "\n" else 1)
            else:
                tokens += 1
            i = j
        else:
            if ch in _OPEN:
                depth += 1
                deepest = max(deepest, depth)
            elif ch in _CLOSE:
                depth = max(depth - 1, 0)
            tokens += 1
            i += 1
        if tokens > MAX_CLAUSE_TOKENS or deepest > MAX_NESTING:
            end_clause()
    if not problems:
        end_clause()
    return problems


def _number_tail(text: str, i: int, j: int) -> int:
    """Where the token ``text[i:j]`` (letters, digits, underscores) really ends. Digits before a quote are a
    number as SWI-Prolog reads it, never the start of a quoted item: ``0'a``, ``0'\\n``, ``0'''`` and ``0''``
    are character codes, ``16'FF`` and ``2'101`` radix numbers. A quote after anything else opens one."""
    n = len(text)
    if j >= n or text[j] != "'" or not text[i:j].isdigit():
        return j
    k = j + 1
    if text[i:j] == "0":
        if text.startswith("''", k):
            return k + 2
        return min(n, k + (2 if k < n and text[k] == "\\" else 1))
    radix = int(text[i:j])
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"[:radix] if 2 <= radix <= 36 else ""
    while k < n and text[k].isascii() and text[k].lower() in digits:
        k += 1
    return k if k > j + 1 else j  # no digit of that radix follows: the quote opens a quoted item


def _quoted_end(text: str, i: int) -> int:
    """The index just past the quoted item that starts at ``i`` (its quote doubled or escaped inside)."""
    quote, j, n = text[i], i + 1, len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
        elif c == quote:
            if j + 1 < n and text[j + 1] == quote:
                j += 2
            else:
                return j + 1
        else:
            j += 1
    return n
