"""JSON a model wrote, read as strict JSON and nothing more: the consumer re-checks the grammar's promise.

A grammar-constrained output is a promise, not a proof: a hand-edited grammar, a fallback sampler, a remote
backend with no grammar or a prompt-injected model can all write text Python's parser reads more loosely
than JSON. So the parser here refuses ``NaN``, ``Infinity``, numbers past a double (``1e999``) and integers
longer than the wire takes (Python's own limit raised a bare ValueError past every handler): NaN
compares false with every ``minimum`` and ``maximum``, so it passed a schema's bounds. And it refuses a key
given twice in one object: Python keeps the last, a reader of the text (or another parser) the first, so
which answer counts would depend on who reads. And it refuses an output nested deeper than a tool call's
arguments may be, and text holding half a surrogate pair (a string grammar allows any ``\\uXXXX`` escape):
both passed every check, then no encoder on the way to the caller could write them. Raw control characters
inside strings are still read: the schema grammars allow them.
"""

from __future__ import annotations

import json
import math
from typing import Any

from sentinel_mcp.core.errors import SentinelError
from sentinel_mcp.core.utf8_text import utf8_writable
from sentinel_mcp.core.wire_limits import MAX_ARGUMENT_DEPTH, MAX_INT_DIGITS, value_problem

# as deep as a tool call's arguments may be: an open object's grammar is recursive, so only max_tokens bounds
# an output's depth, and one 600 levels deep passed every check, then no encoder on its way out could write it
MAX_OUTPUT_DEPTH = MAX_ARGUMENT_DEPTH


class ModelJsonError(SentinelError, ValueError):
    """Model output that is not strict JSON; the message says where, never echoing more than a short token."""

    area = "llm"  # model output, whichever part (cortex, swarm, agent) reads it


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ModelJsonError(f"{text[:40]} is not a finite JSON number")
    return value


def _int(text: str) -> int:
    # Python refuses past 4300 digits with a bare ValueError; the wire refuses past MAX_INT_DIGITS anyway
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ModelJsonError(f"an integer has more than {MAX_INT_DIGITS} digits")
    return int(text)


def _constant(name: str) -> Any:
    raise ModelJsonError(f"{name} is not a finite JSON number")




def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ModelJsonError(f"key {key[:60]!r} is given more than once in one object")
        if not utf8_writable(key):
            raise ModelJsonError("a key is not Unicode text (half a surrogate pair)")
        if type(value) is str and not utf8_writable(value):
            raise ModelJsonError("a text is not Unicode (half a surrogate pair)")
        out[key] = value
    return out


def _texts_unicode(value: Any) -> bool:
    """Whether every text of ``value`` (keys are checked as objects are built) is Unicode; iterative, and
    after the depth check, so it walks at most MAX_OUTPUT_DEPTH levels."""
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is str:
            if not utf8_writable(v):
                return False
        elif type(v) is list:
            stack.extend(v)
        elif type(v) is dict:
            stack.extend(x for x in v.values() if type(x) is not str)  # direct texts: checked when built
    return True


# built once: json.loads with hooks builds a decoder (and its scanner) on every call
_DECODER = json.JSONDecoder(
    parse_int=_int, parse_float=_finite, parse_constant=_constant, object_pairs_hook=_unique, strict=False
)


def loads_model_json(text: str) -> Any:
    """Parse model output strictly. Raises ``ModelJsonError`` (not finite, a key twice, nested deeper than
    ``MAX_OUTPUT_DEPTH``, not Unicode), ``json.JSONDecodeError`` (not JSON) or ``RecursionError`` (nested
    past the parser)."""
    value = _DECODER.decode(text)
    problem = value_problem(value, MAX_OUTPUT_DEPTH)  # iterative: no recursion of its own
    if problem is not None:
        raise ModelJsonError(problem)
    if not _texts_unicode(value):
        raise ModelJsonError("a text is not Unicode (half a surrogate pair)")
    return value
