"""Writing Python values as Prolog source text (quoted atoms), for queries sent to the engine."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def quote_atom(text: str) -> str:
    """A quoted Prolog atom for any string (ASCII-only escapes, so encoding never matters)."""
    out = ["'"]
    for ch in text:
        o = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == "'":
            out.append("\\'")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif o < 32 or o > 126:
            out.append(f"\\x{o:x}\\")
        else:
            out.append(ch)
    out.append("'")
    return "".join(out)


def json_atom(value: Any) -> str:
    """A Python value as a quoted atom holding its JSON (the core parses it with atom_json_term)."""
    return quote_atom(json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=str))


def float_text(x: float) -> str:
    return repr(float(x)) if x != float("inf") else "1.0e18"


def module_name(prefix: str, key: str) -> str:
    """A safe Prolog module name derived from any key (sessions have arbitrary ids)."""
    return f"{prefix}_{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def term_text(value: Any) -> str:
    """A JSON-like Python value as a Prolog term (the engine's JSON mapping: objects are json([K=V]))."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ",".join(term_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "json([" + ",".join(f"{quote_atom(str(k))}={term_text(v)}" for k, v in value.items()) + "])"
    return quote_atom(str(value))


def fact_text(predicate: str, args: list[Any]) -> str:
    if not args:
        return quote_atom(predicate)
    return f"{quote_atom(predicate)}({','.join(term_text(a) for a in args)})"
