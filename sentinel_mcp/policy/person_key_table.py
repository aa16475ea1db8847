"""Writes ``prolog/person_key_letters.pl``: each key letter that reads as another (``core/person_keys``, from
UTS #39's table shipped in ``core/confusables.txt``) and the letters it is taken as, for the runtime's
``person_name_key/2``. Generated, never edited: run ``python -m sentinel_mcp.policy.person_key_table`` to
write it again (tests/policy/test_person_name_keys.py checks the file is what this writes, and that the
runtime's keys are this Python's over many names)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from sentinel_mcp.core.confusable_table import VERSION
from sentinel_mcp.core.person_keys import compat_folds, letter_fold

TABLE = Path(__file__).parent / "prolog" / "person_key_letters.pl"

HEADER = """\
/*  Person key letters from Unicode {version}'s confusables.txt (UTS #39), written by
    sentinel_mcp/policy/person_key_table.py: do not edit.
    key_compat_fold(Code, Codes): the character Code is taken as Codes before NFKD (NFKD would make it a
    letter of another shape); key_letter_fold(Code, Codes): the key letter Code (lower case, NFKD-stable)
    is taken as Codes. One fact a block of 256 code points (Offset-Codes pairs): a few large terms load
    faster than a clause a letter. */
:- module(person_key_letters, [key_compat_fold/2, key_letter_fold/2]).

key_compat_fold(C, F) :- B is C >> 8, compat_block(B, Ps), O is C /\\ 255, memberchk(O-F, Ps).
key_letter_fold(C, F) :- B is C >> 8, letter_block(B, Ps), O is C /\\ 255, memberchk(O-F, Ps).

"""


def folds() -> dict[int, str]:
    """Each key letter whose fold is not itself."""
    out: dict[int, str] = {}
    for code in range(0x110000):
        ch = chr(code)
        if unicodedata.category(ch)[0] != "L" or ch.lower() != ch or unicodedata.normalize("NFKD", ch) != ch:
            continue
        folded = letter_fold(ch)
        if folded != ch:
            out[code] = folded
    return out


def _blocks(name: str, table: dict[int, str]) -> list[str]:
    blocks: dict[int, list[str]] = {}
    for code, folded in sorted(table.items()):
        codes = ", ".join(f"0x{ord(c):X}" for c in folded)
        blocks.setdefault(code >> 8, []).append(f"{code & 255}-[{codes}]")
    return [f"{name}(0x{block:X}, [{', '.join(pairs)}])." for block, pairs in blocks.items()]


def table_text() -> str:
    lines = _blocks("compat_block", {ord(s): f for s, f in compat_folds().items()})
    lines += _blocks("letter_block", folds())
    return HEADER.format(version=VERSION) + "\n".join(lines) + "\n"


if __name__ == "__main__":
    TABLE.write_text(table_text(), encoding="utf-8")
