"""Malayalam names written before Unicode 5.1 encoded the chillu letters end in the consonant, the virama and
a ZWJ ('കിരണ്<U+200D>', Kiran; 'ബഷീര്<U+200D>', Basheer): that ZWJ is seen (the chillu's form, not the
virama's), and ``person_name/1`` refused every such name (a joiner never last). It now stands at a name's or a
word's end right after a Malayalam consonant that has a chillu and its virama, nowhere else: every joiner
forgery stays refused. Real SWI-Prolog, the rule sentinel_rt exports; each name is passed as its code list."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from sentinel_mcp.paths import PROJECT_ROOT

RT = PROJECT_ROOT / "sentinel_mcp" / "policy" / "prolog" / "sentinel_rt.pl"
pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(shutil.which("swipl") is None, reason="SWI-Prolog is not installed")]
ZWJ, ZWNJ, VIRAMA = "\u200d", "\u200c", "\u0d4d"
OLD_STYLE = [
    "കിരണ്" + ZWJ,                         # Kiran: chillu NN
    "ബഷീര്" + ZWJ,                         # Basheer: chillu RR
    "ജോണ്" + ZWJ + " പോള്" + ZWJ,           # John Paul: a chillu before a blank, and last
    "കമല്" + ZWJ,                          # Kamal: chillu L
    "അര്" + ZWJ + "ജുന്" + ZWJ,             # Arjun: a chillu inside the word (a ZWJ before a letter), and last
    "മുരളീധരന്" + ZWJ + "-നായര്" + ZWJ,     # before a hyphen
    "ഫസല്" + ZWJ + ".",                    # before a period
    "ണ്" + ZWJ,                            # the chillu alone
    "കിരൺ", "ബഷീർ",                         # the atomic chillus (Unicode 5.1): as before
]
FORGED = [
    "Kiran" + ZWJ, "Li" + VIRAMA + ZWJ,                   # Latin
    "കിരണ" + ZWJ,                                         # no virama
    "കിരണി" + VIRAMA + ZWJ,                                # a vowel sign between the consonant and the virama
    "പ്" + ZWJ, "കിരപ്" + ZWJ,                              # PA has no chillu: the ZWJ shows nothing
    "क्" + ZWJ, "र्" + ZWJ,                                 # Devanagari has no chillu
    "കിരണ്" + ZWJ + ZWJ, "കിരണ്" + ZWNJ,                   # two joiners; a ZWNJ last
    "കിരണ്" + ZWJ + "Li", "കിരണ്" + ZWJ + "\u0301",          # another script after it, or its mark
    "കിരണ്" + ZWJ + "\u034f", "കിരണ്" + ZWJ + "\u200b",       # an invisible character after it
    "കിരണ്" + ZWJ + ZWJ + " പോള്",                          # two joiners before a blank
    ZWJ + "കിരണ്", VIRAMA + ZWJ,                            # first
]


def _passes(names: list[str]) -> list[bool]:
    lists = ", ".join("[" + ", ".join(str(ord(c)) for c in n) + "]" for n in names)
    goal = (f"use_module('{RT}'), forall(member(Cs, [{lists}]), ( atom_codes(A, Cs), "
            "( person_name(A) -> writeln(yes) ; writeln(no) ) )), halt")
    out = subprocess.run(["swipl", "-q", "-g", goal, "-t", "halt(1)"], capture_output=True, text=True,
                         timeout=100, check=True).stdout.split()
    assert len(out) == len(names), out
    return [o == "yes" for o in out]


def test_old_style_chillu_names_pass() -> None:
    refused = [ascii(n) for n, ok in zip(OLD_STYLE, _passes(OLD_STYLE), strict=True) if not ok]
    assert refused == []


def test_joiner_forgeries_around_a_virama_stay_refused() -> None:
    passed = [ascii(n) for n, ok in zip(FORGED, _passes(FORGED), strict=True) if ok]
    assert passed == []
