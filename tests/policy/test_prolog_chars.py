"""The stand-ins of lone surrogates (prolog_text): the quick checks that skip the regex scan on texts that
cannot hold the character looked for must map every text exactly as the scan alone did."""

from __future__ import annotations

import json
import random
import re

from sentinel_mcp.policy.prolog_text import (from_prolog_chars, from_prolog_json, json_text, quote_atom,
                                             to_prolog_chars)

SURROGATE = re.compile("[\ud800-\udfff]")
STAND_IN = re.compile("[\U0010f800-\U0010ffff]")
BASE = 0x10F800 - 0xD800
PIECES = ["a", "'", '"', "\\", "\n", "\x00", "\x7f", "é", "\u00ff", "\u20ac", "\ud7ff", "\ud800", "\udbff",
          "\udc00", "\udfff", "\ue000", "\uffff", "\U00010000", "\U0001f600", "\U0010f7ff", "\U0010f800",
          "\U0010fbff", "\U0010ffff", "\ud83d\ude00", "policy", " "]


def texts(n: int) -> list[str]:
    rng = random.Random(2125)
    out = ["", "plain ascii", *PIECES, "x" * 5000 + "\ud800", "é" * 5000 + "\U0010f801", "\u20ac" * 3000]
    for _ in range(n):
        out.append("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 40))))
    return out


def test_to_and_from_prolog_chars_are_the_scans() -> None:
    for t in texts(3000):
        to = to_prolog_chars(t)
        assert to == SURROGATE.sub(lambda m: chr(ord(m.group()) + BASE), t), ascii(t)
        assert not SURROGATE.search(to)
        back = from_prolog_chars(to)
        assert back == STAND_IN.sub(lambda m: chr(ord(m.group()) - BASE), to), ascii(t)
        assert from_prolog_chars(t) == STAND_IN.sub(lambda m: chr(ord(m.group()) - BASE), t), ascii(t)
        if not STAND_IN.search(t):  # a text without stand-ins of its own comes back as it went
            assert back == t, ascii(t)


def test_engine_json_is_restored_as_by_the_scan() -> None:
    for t in texts(1000):
        value = {"k" + t: [t, {"v": t}], "n": 1}
        written = json_text(value)  # as the engine would write it back: real characters, stand-ins
        parsed = json.loads(written)
        restored = from_prolog_json(written)
        if STAND_IN.search(written):
            assert restored != parsed or not SURROGATE.search(t)
        else:
            assert restored == parsed
        if not STAND_IN.search(t):
            assert restored == value, ascii(t)
        assert quote_atom(t).startswith("'")


def _quoted_one_by_one(text: str) -> str:
    """The escapes of a quoted atom, character by character (what quote_atom must write, however it does)."""
    out = ["'"]
    for ch in to_prolog_chars(text):
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


def test_quote_atom_escapes_every_character_as_one_by_one() -> None:
    rng = random.Random(77)
    every_ascii = "".join(chr(o) for o in range(128))
    samples = [*texts(2000), every_ascii, every_ascii[::-1], "'" * 300, "\\" * 300, "a'b\\c\td\ne\rf\x7fg"]
    for _ in range(2000):  # any code point (surrogates too), mostly near the edges of the escapes
        samples.append("".join(chr(rng.choice([rng.randrange(0, 160), rng.randrange(0x110000)]))
                               for _ in range(rng.randint(0, 30))))
    for t in samples:
        quoted = quote_atom(t)
        assert quoted == _quoted_one_by_one(t), ascii(t)
        assert quoted.isascii()
