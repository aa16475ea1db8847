"""Argument keys one spelling each: no two keys of one object, and no key and a declared parameter, that a
lenient reader takes for one name.

Go's ``encoding/json`` (and readers like it) matches a key to its struct field case-insensitively, with
Unicode's folds (``ſ`` is ``s``, the Kelvin sign ``K`` is ``k``), the last match winning; others normalize
Unicode first. So ``{"account": 12, "Account": 13}`` was decided on 12 by the guard and ran on 13 upstream.
The guard cannot know the upstream's reader: a key that folds (NFKC, then case-folded) to another key of the
same object, or to a declared top-level parameter it is not, is refused, at every level of the arguments. So
is a key that reads as one of those (an invisible or look-alike character: ``look_alike_keys``), whatever the
upstream's ``undeclared_arguments``: the guard would read the declared name as missing while an upstream that
drops what it cannot see acts on the key (a nested object's declared names: ``argument_shape``)."""

from __future__ import annotations

import unicodedata
from typing import Any

from sentinel_mcp.gateway.look_alike_keys import read_alike


def _folded(key: str) -> str:
    # ASCII is its own NFKC form, and its case fold is lower(): the common key costs no Unicode tables
    return key.lower() if key.isascii() else unicodedata.normalize("NFKC", key).casefold()


def _clash(keys: Any, declared: dict[str, str], names: frozenset[str] = frozenset()) -> str | None:
    """Two of ``keys`` (or a key and a declared name in ``declared``, by fold) that are one name; ``names``:
    the declared names themselves (a pair of them is the schema's own, never a clash)."""
    seen: dict[str, str] = {}
    plain = True
    for key in keys:
        if not isinstance(key, str):
            continue
        plain = plain and key.isascii()
        folded = _folded(key)
        other = seen.get(folded)
        if other is None and declared.get(folded, key) != key:
            other = declared[folded]
        if other is not None:
            return (
                f"argument names {other!r} and {key!r} are one name to an upstream that ignores case or "
                "Unicode forms; send each argument once, spelled as the tool declares it"
            )
        seen[folded] = key
    if plain and all(n.isascii() for n in names):
        return None  # ASCII names read as themselves (their case is folded above)
    pair = read_alike([*keys, *names], names)
    if pair is None:
        return None
    return (f"argument names {pair[0]!r} and {pair[1]!r} read as one name (an invisible or look-alike "
            "character); send each argument once, spelled as the tool declares it")


def _declared(input_schema: Any, arguments: dict[str, Any]) -> tuple[dict[str, str], frozenset[str]]:
    """The declared top-level names by fold, and as written."""
    props = input_schema.get("properties") if isinstance(input_schema, dict) else None
    props = props if isinstance(props, dict) else {}
    names = frozenset(k for k in props if type(k) is str)
    # keys that are all declared names clash only among themselves: the names' folds are needed otherwise
    return ({} if all(k in props for k in arguments) else {_folded(k): k for k in props}), names


def top_key_spelling_problem(input_schema: Any, arguments: dict[str, Any]) -> str | None:
    """``key_spelling_problem`` for arguments known to hold no object of two keys or more below the top (no
    clash is possible there): the top's keys alone."""
    return _clash(arguments.keys(), *_declared(input_schema, arguments))


def key_spelling_problem(input_schema: Any, arguments: dict[str, Any]) -> str | None:
    """Why ``arguments`` spell a name two ways (see above), or None. ``arguments`` are within the wire's depth
    limit (walked without recursion all the same)."""
    declared, names = _declared(input_schema, arguments)
    stack: list[Any] = [arguments]
    top = True
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            problem = _clash(value.keys(), *((declared, names) if top else ({}, frozenset())))
            if problem is not None:
                return problem
            stack.extend(v for v in value.values() if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, (dict, list)))
        top = False
    return None
