"""A call's arguments as ``sn_decide`` takes them (call_decisions.pl's call_args/2): tagged text split in C,
or JSON."""

from __future__ import annotations

from typing import Any

from sentinel_mcp.policy.prolog_text import json_text

_TAG = {True: "t", False: "f", None: "n"}


def call_args_text(arguments: dict[str, Any]) -> str:
    """A call's arguments for ``sn_decide``: a flat object of texts, integers, booleans and nulls as its keys
    and tagged values joined by 0x1F after a 0x1E (split in C: call_args/2; the text "true" a string, never
    true), anything else, or a key or value holding one of those two characters, as JSON."""
    parts = ["\x1e"]
    for k, v in arguments.items():
        t = type(v)
        # ``in``, not a count of the joined text: no call a key or value (most calls' arguments are few)
        if type(k) is not str or "\x1e" in k or "\x1f" in k:
            return json_text(arguments)
        if t is str:
            if "\x1e" in v or "\x1f" in v:
                return json_text(arguments)
            parts += (k, ("S" if v in ("true", "false", "null") else "s") + v)  # S: a string, not a literal
        elif t is bool or v is None:
            parts += (k, _TAG[v])
        elif t is int:
            parts += (k, "i" + str(v))
        else:
            return json_text(arguments)
    return "\x1f".join(parts)
