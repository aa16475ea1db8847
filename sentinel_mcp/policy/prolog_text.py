"""Writing Python values as Prolog source text (quoted atoms), for queries sent to the engine, and reading
the engine's JSON answers back.

Any Python string reaches Prolog as data. One kind of character needs care: a lone UTF-16 surrogate
(U+D800-U+DFFF, which JSON allows as ``\\ud800`` and Python keeps) is not a character Prolog will read or
write, so it travels as the fact store's escape (``core/stored_text``): an escape character (U+10F7FF)
followed by a code point of Supplementary Private Use Area-B (U+10F800 + offset), the escape character itself
doubled, and is mapped back in everything read from the engine. A code point of U+10F800 and up a text holds
itself stands for itself: two different texts never meet as one atom (a bare stand-in made "BK\\ud800" and
"BK\\U0010f800" one booking to the guard).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from sentinel_mcp.core.stored_text import restored, stored

_ESC = "\U0010f7ff"  # stored_text's escape character


# On every decision's path (the arguments, the engine's answer): a regex scan costs ~5 ns a character, so
# the texts that cannot hold the character looked for are told apart first by cheaper checks in C.


def _has_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")  # fails on a surrogate, and only on one
    except UnicodeEncodeError:
        return True
    return False


def _to_prolog_chars(text: str) -> str:
    if text.isascii() or not (_has_surrogate(text) or _ESC in text):
        return text
    return stored(text)


to_prolog_chars = _to_prolog_chars


def _from_prolog_chars(text: str) -> str:
    if text.isascii() or _ESC not in text:
        return text
    return restored(text)


from_prolog_chars = _from_prolog_chars


# built once: json.dumps with options builds a new encoder on every call (every decision's arguments)
_ENGINE_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)


def json_text(value: Any) -> str:
    """JSON for the engine: real characters (SWI-Prolog's reader does not join \\u surrogate pairs), lone
    surrogates as they are: where the text enters Prolog maps them, once (a call's argument, ``quote_atom``,
    the query worker's line). The mapping is no function that may run twice: a text holding the escape
    character itself is not what it would be escaped twice."""
    return _ENGINE_JSON.encode(value)


def _restore(value: Any) -> Any:
    if isinstance(value, str):
        return _from_prolog_chars(value)
    if isinstance(value, list):
        return [_restore(v) for v in value]
    if isinstance(value, dict):
        return {_restore(k): _restore(v) for k, v in value.items()}
    return value


def from_prolog_json(text: str) -> Any:
    """Parse JSON written by the engine, restoring lone surrogates (rare: checked once over the text); a text
    nested past what ``json.loads`` takes is read cut at ``deep_json.DEPTH`` levels."""
    try:
        value = json.loads(text)
    except RecursionError:
        from sentinel_mcp.policy.deep_json import cut_deep

        text = cut_deep(text)
        value = json.loads(text)
    return _restore(value) if not text.isascii() and _ESC in text else value


# printable ASCII but the quote and the backslash: such a text goes between quotes as it is
_PLAIN = re.compile(r"[ -&(-\[\]-~]*")
# the ASCII characters that need an escape between quotes (the rest of ASCII stands for itself)
_ASCII_ESCAPES = {o: f"\\x{o:x}\\" for o in (*range(32), 127)} | {
    ord("\\"): "\\\\", ord("'"): "\\'", ord("\n"): "\\n", ord("\t"): "\\t"}
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _hex_escape(m: re.Match[str]) -> str:
    return f"\\x{ord(m.group()):x}\\"


def quote_atom(text: str) -> str:
    """A quoted Prolog atom for any string (ASCII-only escapes, so encoding never matters)."""
    if _PLAIN.fullmatch(text):
        return f"'{text}'"
    # a fact's text always holds quotes, a result's JSON often: escaped by C (translate), not a loop in Python
    out = _to_prolog_chars(text).translate(_ASCII_ESCAPES)
    if not out.isascii():
        out = _NON_ASCII.sub(_hex_escape, out)
    return f"'{out}'"


def json_atom(value: Any) -> str:
    """A Python value as a quoted atom holding its JSON (the core parses it with atom_json_term)."""
    return quote_atom(json_text(value))


def float_text(x: float) -> str:
    return repr(float(x)) if x != float("inf") else "1.0e18"


def module_name(prefix: str, key: str) -> str:
    """A safe Prolog module name derived from any key (sessions have arbitrary ids)."""
    # surrogatepass: any Python string hashes (a lone surrogate too), and distinct strings stay distinct; the
    # whole digest: two ids of one module share their facts, and a client names its conversations (labels)
    return f"{prefix}_{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()}"


LITERAL_TEXTS = frozenset(("true", "false", "null"))  # texts that, as atoms, are the JSON literals' atoms


class OptionAtom(str):
    """A text that is a rulebase's own atom (a choice question's option, offered from the rulebase): written
    as that atom whatever it spells."""

    __slots__ = ()


# the text writeq gives an atomic term: a number, a bare or quoted atom, a string (nothing else is a choice)
_ATOMIC_TERM = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?|[a-z][A-Za-z0-9_]*|'(?:[^'\\]|\\.|'')*'"
                          r'|"(?:[^"\\]|\\.|"")*"')


class DeclaredTerm(str):
    """A choice's term as the rulebase (or the engine, for a ``choice_of`` found in facts) wrote it, in its
    writeq text: written as that term, so a chosen ``"1"`` stays the string, ``'1'`` the atom, ``1`` the
    number. Only the text of an atomic term is one."""

    __slots__ = ()

    def __new__(cls, text: str) -> DeclaredTerm:
        if not isinstance(text, str) or not _ATOMIC_TERM.fullmatch(text):
            raise ValueError(f"not the text of an atomic term: {str(text)[:60]!r}")
        return super().__new__(cls, text)


def term_text(value: Any) -> str:
    """A JSON-like Python value as a Prolog term (the engine's JSON mapping: objects are json([K=V])). A text
    spelling a literal (``"true"``, ``"false"``, ``"null"``) is a string: as an atom it would be the boolean
    or null the rules test for (a user's or agent's text answer "true", a context bound to the text "null"),
    as a call's argument and a result's text are (from_call_json/2, from_result_json/2)."""
    if isinstance(value, DeclaredTerm):
        return str(value)
    if type(value) is str and value in LITERAL_TEXTS:
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ",".join(term_text(v) for v in value) + "]"
    if isinstance(value, dict):
        # a blank after "=": glued, a negative number's sign made one symbol token with it ('k'=-1 reads as
        # the unknown operator =-, a syntax error), and the fact, or the config seed, could not be written
        return "json([" + ",".join(f"{quote_atom(str(k))}= {term_text(v)}" for k, v in value.items()) + "])"
    return quote_atom(str(value))


def fact_text(predicate: str, args: list[Any]) -> str:
    if not args:
        return quote_atom(predicate)
    return f"{quote_atom(predicate)}({','.join(term_text(a) for a in args)})"
