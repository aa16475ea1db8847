"""``person_name_key/2`` (the airline's "each passenger a different person") folds look-alike letters: "Mia"
with a Cyrillic а, a Greek Μ or a lunate sigma "Ϲ" for "C" made a second person a person cannot tell from the
first. The runtime's table is the one ``policy/person_key_table.py`` writes from UTS #39's confusables.txt
(never edited by hand), and a real SWI-Prolog's keys are the Python ones (``core/person_keys``) over every
folded letter of the table and names built of them."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from sentinel_mcp.core.person_keys import compat_folds, person_name_key
from sentinel_mcp.paths import PROJECT_ROOT
from sentinel_mcp.policy.person_key_table import TABLE, folds, table_text

RT = PROJECT_ROOT / "sentinel_mcp" / "policy" / "prolog" / "sentinel_rt.pl"
pytestmark = [pytest.mark.timeout(180),
              pytest.mark.skipif(shutil.which("swipl") is None, reason="SWI-Prolog is not installed")]

KEYS_GOAL = r"""
    set_stream(user_input, encoding(utf8)), set_stream(user_output, encoding(utf8)),
    repeat, read_line_to_string(user_input, S),
    ( S == end_of_file -> ! ; atom_string(A, S), person_name_key(A, K), writeq(K), nl, fail ),
    halt.
"""


def runtime_keys(names: list[str]) -> list[str]:
    out = subprocess.run(["swipl", "-q", "-g", f"use_module('{RT}')", "-g", KEYS_GOAL, "-t", "halt(1)"],
                         input="\n".join(names) + "\n", capture_output=True, text=True, encoding="utf-8",
                         timeout=170, check=True).stdout.splitlines()
    return [k[1:-1] if k.startswith("'") else k for k in out]


def test_the_table_file_is_the_one_the_generator_writes() -> None:
    assert TABLE.read_text(encoding="utf-8") == table_text()


# one person to whoever reads the list: Latin, and look-alike letters of other scripts or forms
SAME_MIA = ["Mia Li", "MIA LI", "Mi\u0430 Li", "\u041cia Li", "\u039cia Li", "M\u0131a L\u0456",
            "Mi\u03b1 L\u0456", "\u041c\u0406\u0410 L\u0406", "\uff2dia Li", "\U0001d40cia Li"]
SAME_CLARA = ["Clara Rossi", "\u03f9lara Rossi", "\u03f2lara Rossi", "\u0421lara R\u043essi",
              "C\u217cara Rossi"]


@pytest.mark.parametrize("names", [SAME_MIA, SAME_CLARA], ids=["mia", "clara"])
def test_look_alike_spellings_are_one_person(names: list[str]) -> None:
    keys = runtime_keys(names)
    assert len(set(keys)) == 1, list(zip(names, keys))
    assert keys[0] != runtime_keys(["Omar Rossi"])[0]


def test_the_runtime_keys_are_the_python_keys() -> None:
    """Every letter the table folds, and every compatibility form folded before NFKD, alone and inside a
    name, through the runtime and through Python: the same keys."""
    chars = [chr(c) for c in folds()] + sorted(compat_folds())
    names = [n for ch in chars for n in (ch, f"M{ch}a Li", f"{ch.upper()}{ch} {ch}-Li")]
    names = [n for n in names if "\n" not in n and "\r" not in n and n.isprintable()]
    assert len(names) > 3000
    want = [person_name_key(n) for n in names]
    got = runtime_keys(names)
    wrong = [(n, w, g) for n, w, g in zip(names, want, got) if w != g]
    assert len(got) == len(names) and not wrong, wrong[:20]
