"""The engine's JSON text cut to a depth Python's reader takes, for the rare text nested past it.

Why: ``json.loads`` recurses per level and raises ``RecursionError`` near 1,000 levels; a proof tree that deep
is legitimate (a rule walking a list of 1,000 elements proves 1,000 nested rule levels), and the error denied
the call as an internal one. Nothing Sentinel keeps needs more than ``DEPTH`` levels (a recorded proof is cut
at 64), so what lies deeper is replaced by a marker. Only the text that failed is scanned, once, in a loop."""

from __future__ import annotations

import re

DEPTH = 200
CUT = f'"<nested too deep to show: cut at {DEPTH} levels>"'
# a JSON string (its escapes skipped whole, the unrolled form: no backtracking per character) or a bracket
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


def cut_deep(text: str, depth: int = DEPTH) -> str:
    """``text`` with every value that opens below ``depth`` levels replaced by ``CUT``."""
    out: list[str] = []
    level, start, last = 0, -1, 0
    for m in _TOKEN.finditer(text):
        token = m.group()
        if token[0] == '"':
            continue
        if token in "[{":
            level += 1
            if level == depth + 1:
                start = m.start()
        else:
            if level == depth + 1 and start >= 0:
                out += (text[last:start], CUT)
                last, start = m.end(), -1
            level -= 1
    out.append(text[last:])
    return "".join(out)
