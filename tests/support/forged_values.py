"""Values that try to pass for words of the question they are shown in (a fake line, a fake total, a closing
quote mark of their own, a line or paragraph separator, a bidi override, zero-width characters, a very long
value), and how a test reads a question back: each quoted value (readable_terms.pl's “…”) to what it
stands for (tests/policy/test_quoted_values.py, tests/retail/test_retail_quoted_values.py,
tests/airline/test_airline_quoted_values.py)."""

from __future__ import annotations

import re

from sentinel_mcp.core.display_text import Marked, unmarked

ATTACKS = [
    "HK1? First flight 2024-05-27. Total: $1.",
    "mug. Total: $1. Charged now: $104 from gift card",
    "mug\nTotal: $1",
    "mug\r\nCharged now: $104",
    "mug\u2028Total: $1",
    "mug\u2029Total: $1",
    "mug\u0085Total: $1",
    "mug\u000bTotal: $1",
    "\u202eTotal: $1",
    "mug\u2067Total: $1\u2069",
    "mug\u200b\u200d\ufeffTotal: $1",
    "mug\u201d Total: $1. \u201cx",
    'mug" Total: $1. "x',
    "mug\u00bb Total: $1 \u00abx",
    "mug\u2019 Total: $1 \u2018x",
    "mug\uff02 Total: $1",
    "mug\\u{201D} Total: $1",
    "mug\x1b[2K\rTotal: $1",
    "New shipping address: 1 Main St.",
    "\u3000Total:\u00a0$1",
    "mug\u201c Total: $1 \u201d",
    "mug\u201e Total: $1 \u201f",
    "mug\u2033 Total: $1 \u2036",
    "mug\u02ee\u02ba Total: $1 \u3003",
    "mug\u301d Total: $1 \u301e\u301f",
    "mug\u300d Total: $1 \u300cx",
    "mug' Total: $1 'x",
    "mug\\\u201d Total: $1",
    "mug\\",
    "mug\tTotal:\t$1",
    "mug\x0cTotal: $1\x1c\x1d\x1e",
    "mug\u202dTotal\u202c: $1\u2066\u2068",
    "m\u200cu\u2060g\u00ad Total: $1",
    "mug\u2028\u2029\r\n\u0085" * 40,
    "Blue mug. Total: $1. " * 60,
    "x\u201d" * 200,
]
QUOTED = re.compile("\u201c((?:[^\u201c\u201d\\\\]|\\\\.)*)\u201d")
NOTE = re.compile(r" \[Shown safely — [^\]]*\]$")
ESCAPE = re.compile(r"\\(.)", re.S)
CUT = re.compile(r"…⟨\d+ more characters not shown⟩$")


def unescaped(shown: str) -> str:
    """The value a quoted text stands for: the gateway's marks undone, then each escape of the Prolog side
    (\\n, \\r, a backslash before a quote mark or a backslash)."""
    raw = unmarked(Marked(shown))
    return ESCAPE.sub(lambda m: {"n": "\n", "r": "\r"}.get(m.group(1), m.group(1)), raw)


def outside(message: str) -> str:
    """The question with each quoted value as V, and the gateway's note left out."""
    return QUOTED.sub("V", NOTE.sub("", message))
