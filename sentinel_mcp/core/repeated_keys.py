"""A name given twice in one JSON object: found as the wire's reader builds each object, and told where.

Why refused at all: JSON (RFC 8259 §4) leaves the meaning of such an object to each reader. Python's and
pydantic's keep the last value, Go's ``encoding/json`` into a struct, many stream parsers and loggers the
first, so the guard could judge one value while a reader behind it (an upstream in another language, the
audit's reader, a relay) acts on the other. The check rides the C scanner's ``object_pairs_hook``:
``dict(pairs)`` is built at C speed and compared by length, one Python call an object (issue 21: the hot
path)."""

from __future__ import annotations

import json
from typing import Any

from sentinel_mcp.core.errors import GatewayError


class RepeatedKey(GatewayError):
    """Raised by ``unique_object`` while parsing (not a ValueError: the parse's own errors are those); the
    wire's reader answers it with its own refusal (``wire_limits``)."""


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An ``object_pairs_hook``: the object, or ``RepeatedKey`` when a name occurs twice in it."""
    built = dict(pairs)
    if len(built) != len(pairs):
        raise RepeatedKey
    return built


def _twice(pairs: list[tuple[str, Any]]) -> str | None:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return key
        seen.add(key)
    return None


def _nested_twice(value: Any) -> str | None:
    """The first name repeated in an object of ``value`` read as pairs (iterative: depth was not yet told)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is list:
            if v and all(type(p) is tuple for p in v):  # an object (an array holds no tuples)
                key = _twice(v)
                if key is not None:
                    return key
                stack.extend(p[1] for p in v)
            else:
                stack.extend(v)
    return None


def where_repeated(text: str, decoder: json.JSONDecoder) -> tuple[str, bool, Any]:
    """For ``text`` that ``unique_object`` refused: (the name repeated, whether it is inside the top object's
    ``params``, the top object's ``id`` when it is given once, else None). ``decoder`` is the wire's own
    (its number limits), read with objects as pairs; its errors propagate (the text may not be JSON past the
    name repeated: a parse error then, as for any text). Read again only for a message refused, with objects
    as their lists of pairs, so that every occurrence of a name is seen."""
    pairs = json.JSONDecoder(object_pairs_hook=list, parse_int=decoder.parse_int,
                             parse_float=decoder.parse_float, parse_constant=decoder.parse_constant)
    top = pairs.decode(text)
    if not (type(top) is list and top and all(type(p) is tuple for p in top)):
        return (_nested_twice(top) or "", False, None)
    ids = [v for k, v in top if k == "id"]
    rid = ids[0] if len(ids) == 1 else None
    key = _twice(top)
    if key is not None:
        return (key, False, rid)
    params = [v for k, v in top if k == "params"]
    inner = _nested_twice(params[0]) if params else None
    if inner is not None:
        return (inner, True, rid)
    return (_nested_twice([v for _, v in top]) or "", False, rid)
