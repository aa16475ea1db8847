"""Argument keys one spelling each: no two keys of one object, and no key and a declared parameter, that a
lenient reader takes for one name.

Go's ``encoding/json`` (and readers like it) matches a key to its struct field case-insensitively, with
Unicode's folds (``ſ`` is ``s``, the Kelvin sign ``K`` is ``k``), the last match winning; others normalize
Unicode first, or drop what no one sees. So ``{"account": 12, "Account": 13}`` was decided on 12 by the guard
and ran on 13 upstream. The guard cannot know the upstream's reader: a key that folds (NFKC, the characters no
one sees removed, case-folded: ``look_alike_keys.read_fold``) to another key of the same object, or to a
declared top-level parameter it is not, is refused, at every level of the arguments. And a top-level key
outside ASCII that reads as a declared parameter by a look-alike character (``\\u0441urrency`` for
``currency``: ``look_alike_keys.declared_read_as``) is refused, whatever the upstream's
``undeclared_arguments`` and ``additionalProperties`` say (a nested object's declared names:
``argument_shape``)."""

from __future__ import annotations

from typing import Any

from sentinel_mcp.gateway.look_alike_keys import LookBudget, TooManyToLook, declared_read_as, read_fold


def _clash(keys: Any, declared: dict[str, str], names: Any = ()) -> str | None:
    """Two of ``keys`` (or a key and a declared name in ``declared``, by fold) that are one name, or a key
    outside ASCII that reads as one of the declared ``names`` (the schema's properties)."""
    seen: dict[str, str] = {}
    plain = True
    for key in keys:
        if not isinstance(key, str):
            continue
        if key.isascii():  # the common key: its fold is lower() (no call, no Unicode tables)
            folded = key.lower()
        else:
            plain, folded = False, read_fold(key)
        other = seen.get(folded)
        if other is None and declared.get(folded, key) != key:
            other = declared[folded]
        if other is not None:
            return (
                f"argument names {other!r} and {key!r} are one name to an upstream that ignores case, "
                "Unicode forms or invisible characters; send each argument once, spelled as the tool "
                "declares it"
            )
        seen[folded] = key
    if plain or not names:
        return None  # ASCII keys read as themselves (their case is folded above): the common call's end
    declared_names = frozenset(n for n in names if type(n) is str)
    budget = LookBudget()
    try:
        for key in keys:
            if isinstance(key, str) and not key.isascii():
                alike = declared_read_as(key, declared_names, budget)
                if alike is not None:
                    return (f"argument name {key!r} reads as the declared {alike!r} (a look-alike or "
                            "invisible character); send each argument spelled as the tool declares it")
    except TooManyToLook as e:
        return str(e)
    return None


def _declared(input_schema: Any, arguments: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """The declared top-level names by fold, and the schema's properties (their names as written, read only
    when a key is not ASCII)."""
    props = input_schema.get("properties") if isinstance(input_schema, dict) else None
    props = props if isinstance(props, dict) else {}
    # keys that are all declared names clash only among themselves: the names' folds are needed otherwise
    return ({} if all(k in props for k in arguments) else {read_fold(k): k for k in props}), props


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
            problem = _clash(value.keys(), *((declared, names) if top else ({}, ())))
            if problem is not None:
                return problem
            stack.extend(v for v in value.values() if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, (dict, list)))
        top = False
    return None
