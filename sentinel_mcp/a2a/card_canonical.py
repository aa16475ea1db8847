"""The canonical form an agent card's signatures cover (A2A v1.0 §8.4): RFC 8785 (JCS) of the card object
without its ``signatures`` member, with empty strings, arrays, objects and nulls left out (as a2a-sdk's signer
does, so cards it signs verify here).

The form is taken from the JSON as received, not from Sentinel's parsed model: the signature then covers every
member the peer sent, read or not. A card with a name twice in one object is refused outright: readers keep
different ones (the last, the first), so a signer and a verifier could see two different cards in one text.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

from sentinel_mcp.core import wire_limits
from sentinel_mcp.core.errors import A2AError

MAX_DEPTH = 64
_SAFE_INT = 2**53 - 1  # JSON numbers are IEEE doubles (RFC 8785 §3.2.2.3): larger integers have no form
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


class NotCanonical(A2AError, ValueError):
    """The value has no canonical form (or is not one JSON text with unique names)."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise NotCanonical(f"the name {key[:40]!r} occurs twice in one object")
        seen[key] = value
    return seen


def parse_unique(text: str) -> Any:
    """``text`` parsed, refusing an object that holds a name twice (I-JSON, RFC 7493 §2.3), and first one
    past the wire's bounds (``wire_limits``: depth, values, integer size): 1,000 levels of ``[`` fit in a
    2 KB signature header, and the parser's ``RecursionError`` got past every caller's ``except``."""
    try:
        wire_limits.loads(text)  # (its WireError is a ValueError)
        return json.loads(text, object_pairs_hook=_unique)
    except NotCanonical:
        raise
    except ValueError as e:
        raise NotCanonical(f"not JSON: {e}") from None


def _without_empty(value: Any, depth: int = 1) -> Any:
    if depth > MAX_DEPTH:
        raise NotCanonical(f"nested deeper than {MAX_DEPTH}")
    if isinstance(value, dict):
        kept = {k: v for k, item in value.items() if (v := _without_empty(item, depth + 1)) is not None}
        return kept or None
    if isinstance(value, list):
        items = [v for item in value if (v := _without_empty(item, depth + 1)) is not None]
        return items or None
    if value == "" and isinstance(value, str):
        return None
    return value


def _string(text: str) -> str:
    out = []
    for ch in text:
        if 0xD800 <= ord(ch) <= 0xDFFF:
            raise NotCanonical("a string holds a lone surrogate")
        out.append(_ESCAPES.get(ch) or (f"\\u{ord(ch):04x}" if ord(ch) < 0x20 else ch))
    return '"' + "".join(out) + '"'


def _number(value: int | float) -> str:
    """ECMAScript ``Number::toString`` (RFC 8785 §3.2.2.3) from Python's shortest round-trip digits."""
    if isinstance(value, int):
        if abs(value) > _SAFE_INT:
            raise NotCanonical("an integer beyond 2**53 has no canonical form")
        return str(value)
    if not math.isfinite(value):
        raise NotCanonical("a non-finite number has no canonical form")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    stripped = digits.rstrip("0")
    exponent = int(exponent) + len(digits) - len(stripped)
    digits = stripped
    k, n = len(digits), len(digits) + int(exponent)  # value = 0.digits * 10**n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if e > 0 else '-'}{abs(e)}"


def canonical_json(value: Any, depth: int = 1) -> str:
    """RFC 8785: members sorted by their names' UTF-16 code units, no whitespace, minimal escapes."""
    if depth > MAX_DEPTH:
        raise NotCanonical(f"nested deeper than {MAX_DEPTH}")
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical_json(v, depth + 1) for v in value) + "]"
    if isinstance(value, dict):
        names = sorted(value, key=lambda k: k.encode("utf-16-be", "surrogatepass"))
        return "{" + ",".join(_string(k) + ":" + canonical_json(value[k], depth + 1) for k in names) + "}"
    raise NotCanonical(f"{type(value).__name__} is not a JSON value")


def signed_form(card: dict[str, Any]) -> bytes:
    """The bytes a card's signatures sign: its canonical form without ``signatures``, empties left out."""
    body = {k: v for k, v in card.items() if k != "signatures"}
    return canonical_json(_without_empty(body) or {}).encode("utf-8")
