"""The JSON objects and arrays written inside a text ("failed: {\"card_1\": \"4111\", ...}"), which the
redactor reads as it reads arguments (``redactor._decodings_scrubbed``): a split card or a secret key written
into an error's text.

Every place an object could start is tried, left to right: objects read are apart, so reading them costs the
text's length at most; a try that fails has read up to where it failed, and the next starts just after where
it started (an object may start inside one that failed: ``{"a": {"card_1": ...}`` left open). Once failed
tries have read ``FAILED_READING`` times the text (decoys that fail late, many of them), what is left is read
by its brackets instead (``_shallow_spans``): the spans that close and hold at most two levels of spans
inside them are tried, each once; spans of one height are apart, so that reading is linear too."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

class _Unlined(str):
    """The text as the decoder reads it: a failed try's error counts no lines. ``JSONDecodeError`` counts the
    newlines before where a try failed, from the text's start: the text's length a try, so many short failed
    tries (``",[{"`` a hundred thousand times) cost the square of the text (seconds of the event loop)."""

    __slots__ = ()

    def count(self, *_: Any) -> int:  # type: ignore[override]
        return 0

    def rfind(self, *_: Any) -> int:  # type: ignore[override]
        return -1


_OBJECT_START = re.compile(r'\{\s*"|\[\s*[\[{"\d-]')  # an object with a key, an array of values
_DECODER = json.JSONDecoder()
FAILED_READING = 2
# tries (at places an object could start, then at bracketed spans) a text is given at most: each is a decoder
# call (~4 us here), so a 4 MB message of ``",[{"`` held the event loop ~6 s; past it the rest of the text is
# read by the redactor's other patterns only (a split card after 20,000 decoys is kept: a known limit)
MAX_TRIES = 20_000
_HEIGHT = 2  # levels of brackets inside a span read by its brackets ({"parts": [{"p": "4111"}, ...]})


def json_objects(text: str) -> list[tuple[int, int, Any]]:
    """(start, end, value) of the JSON objects and arrays written inside a text, left to right, apart."""
    out: list[tuple[int, int, Any]] = []
    at, budget = 0, FAILED_READING * len(text) + 1024
    doc = _Unlined(text)
    tries = 0
    while budget > 0 and (m := _OBJECT_START.search(text, at)) is not None:
        tries += 1
        if tries > MAX_TRIES:
            return out
        try:
            value, end = _DECODER.raw_decode(doc, m.start())
        except ValueError as e:
            budget -= max(getattr(e, "pos", m.end()), m.end()) - m.start()
            at = m.end() if budget > 0 else m.start()
            continue
        except RecursionError:  # (nested past the interpreter's depth, read about that deep)
            budget -= sys.getrecursionlimit()
            at = m.end() if budget > 0 else m.start()
            continue
        out.append((m.start(), end, value))
        at = end
    if budget <= 0:
        out += _read_by_brackets(doc, at, MAX_TRIES - tries)
    return out


def _read_by_brackets(text: _Unlined, at: int, tries: int) -> list[tuple[int, int, Any]]:
    out: list[tuple[int, int, Any]] = []
    spans = set(_shallow_spans(text, at, True) + _shallow_spans(text, at, False))
    for a, b in sorted(spans, key=lambda s: (s[0], -s[1])):  # (outermost first at each start)
        if out and a < out[-1][1]:
            continue  # (inside one read already)
        tries -= 1
        if tries < 0:
            break
        try:
            value, end = _DECODER.raw_decode(text, a)
        except (ValueError, RecursionError):
            continue
        if end == b:
            out.append((a, b, value))
    return out


def _shallow_spans(text: str, at: int, quoted: bool) -> list[tuple[int, int]]:
    """(start, end) of each bracketed span from ``at`` on that closes and holds at most ``_HEIGHT`` levels of
    spans; ``quoted``: a string's brackets are its own (read past its quotes), else every bracket counts (a
    stray quote before an object must not hide it, nor a bracket in one of its strings: both are read)."""
    spans: list[tuple[int, int]] = []
    stack: list[list[int]] = []  # [start, closing bracket, height of the highest span inside]
    for m in (_QUOTED_TOKENS if quoted else _BRACKETS).finditer(text, at):
        ch = m.group()[0]
        if ch in "{[":
            stack.append([m.start(), ord("}" if ch == "{" else "]"), -1])
        elif ch in "}]" and stack and stack[-1][1] == ord(ch):
            start, _, inner = stack.pop()
            height = inner + 1
            if stack:
                stack[-1][2] = max(stack[-1][2], height)
            if height <= _HEIGHT:
                spans.append((start, m.end()))
    return spans


_BRACKETS = re.compile(r"[{}\[\]]")
# (a JSON string is one token, its brackets inside it; a quote that closes on no line is no string)
_QUOTED_TOKENS = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\]]')
