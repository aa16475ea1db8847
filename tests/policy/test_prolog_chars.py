"""The stand-ins of lone surrogates (prolog_text): the quick checks that skip the scan on texts that cannot
hold the characters looked for must map every text exactly as the fact store's escape does, and every text
comes back as it went."""

from __future__ import annotations

import random
import re

from sentinel_mcp.core.stored_text import restored, stored
from sentinel_mcp.policy.prolog_text import (from_prolog_chars, from_prolog_json, json_text, quote_atom,
                                             to_prolog_chars)

SURROGATE = re.compile("[\ud800-\udfff]")
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
        assert to == stored(t), ascii(t)  # the fact store's escape, with the quick checks in front
        assert not SURROGATE.search(to)
        assert from_prolog_chars(to) == t, ascii(t)
        assert from_prolog_chars(t) == restored(t), ascii(t)


def test_engine_json_is_restored_as_by_the_scan() -> None:
    for t in texts(1000):
        value = {"k" + t: [t, {"v": t}], "n": 1}
        written = to_prolog_chars(json_text(value))  # as the engine writes it back: real characters, escapes
        assert from_prolog_json(written) == value, ascii(t)
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


def test_two_different_texts_never_reach_the_engine_as_one() -> None:
    """A lone surrogate travels as a code point of U+10F800 and up, which is also a valid character a text may
    hold itself: "BK\\ud800" and "BK\\U0010f800" were one atom in the engine. Both kinds are now told apart
    (the fact store's escape, ``core/stored_text``), and every text comes back as it went."""
    for t in texts(3000):
        assert from_prolog_chars(to_prolog_chars(t)) == t, ascii(t)
        assert not SURROGATE.search(to_prolog_chars(t)), ascii(t)
    seen: dict[str, str] = {}
    for t in [*texts(3000), *(a + b for a in PIECES for b in PIECES)]:
        assert seen.setdefault(to_prolog_chars(t), t) == t, (ascii(t), ascii(seen[to_prolog_chars(t)]))
        value = {"k" + t: [t, {"v": t}], "n": 1}
        assert from_prolog_json(to_prolog_chars(json_text(value))) == value, ascii(t)


async def test_a_call_is_never_proved_on_the_facts_of_another_text(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The user's own booking "BK\\U0010f800" (a valid character of a private-use plane) was read; a cancel of
    "BK\\ud800", another booking, then met its facts (ownership, status) in the engine and was allowed."""
    from sentinel_mcp.core.decision import Answer, Deny
    from tests.policy.policy_rig import rig

    own, other = "BK\U0010f800", "BK\ud800"
    async with rig(tmp_path / "facts.db") as r:
        r.state["users"]["u_123"].append(own)
        r.state["bookings"][own] = {"status": "confirmed", "cabin": "economy"}
        await r.port.invoke("bk__get_booking", {"booking_id": own}, session_id="s1")
        call = r.port.call_of("bk__cancel_booking", {"booking_id": other}, session_id="s1")
        d = await r.guard.decide(call)
        for _ in range(3):  # whatever it asks is answered yes
            if d.kind != "ask":
                break
            for q in d.questions:
                yes = True if q.meta.get("kind") == "confirm" else "health"
                await r.guard.record_answer(call, q, Answer(action="accept", content={"answer": yes},
                                                            provenance="user"))
            d = await r.guard.decide(call)
        assert isinstance(d, Deny), ascii(d)  # ascii: a lone surrogate in a report breaks xdist
        assert "not a booking of the current user" in d.reason, ascii(d.reason)
