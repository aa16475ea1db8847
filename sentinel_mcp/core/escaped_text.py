"""A text as it reads once its escapes are undone: HTML character references (``&#52;``, ``&#x34;``,
``&amp;``), backslash escapes (``\\u0034``, ``\\U00000034``, ``\\u{34}``, ``\\x34``) and quoted-printable
(``=3D``, ``=C3=A9``, a soft line break ``=`` at a line's end: only what quoted-printable
must encode, so "count=10" is no escape). A tool result or an argument may carry a
secret so ("card &#52;&#49;&#49;&#49;...", "pass\\u0077ord=..."): the redactor reads a text's unescaped form
as well as the text (``redactor.scrub_text``).

One pass of one pattern, each escape read where it stands (an escape that spells another one, "&amp;#52;", is
undone by the next of at most ``ROUNDS`` passes): linear in the text. An escape that names no character (a
lone surrogate, a number past U+10FFFF, bytes that are no UTF-8) stays as written."""

from __future__ import annotations

import html
import re

ROUNDS = 3
_ESCAPE = re.compile(
    r"&(?:#[0-9]{1,8}|#[xX][0-9A-Fa-f]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});?"
    r"|\\(?:u\{[0-9A-Fa-f]{1,6}\}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|x[0-9A-Fa-f]{2})"
    r"|(?:=(?:3[Dd]|20|09|[89A-Fa-f][0-9A-Fa-f]))+|=\r?\n"
)


def may_be_escaped(text: str) -> bool:
    """Whether ``text`` holds a character an escape starts with (a cheap test before the pattern runs)."""
    return "&" in text or "\\" in text or "=" in text


def unescaped(text: str) -> str:
    """``text`` with its escapes undone (up to ``ROUNDS`` times); ``text`` itself when it holds none."""
    for _ in range(ROUNDS):
        if not may_be_escaped(text):
            break
        once = _ESCAPE.sub(_undone, text)
        if once == text:
            break
        text = once
    return text


def _undone(m: re.Match[str]) -> str:
    piece = m.group()
    head = piece[0]
    if head == "&":
        return html.unescape(piece)
    if head == "=":
        if piece[1] in "\r\n":  # (quoted-printable's soft line break: the line goes on)
            return ""
        try:
            return bytes.fromhex(piece.replace("=", "")).decode("utf-8")
        except ValueError:
            return piece
    code = int(piece[2:].strip("{}"), 16)
    return chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else piece
