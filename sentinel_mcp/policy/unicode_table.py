"""Writes ``prolog/unicode_categories.pl``: Unicode's general category of every code point, as Python's
``unicodedata`` knows it, for ``sentinel_rt:unicode_category/2``.

Why not SWI-Prolog's ``unicode_property/2``: its utf8proc tables are Unicode 5.x (SWI-Prolog 9.0), so every
letter added since is no letter to it: Ethiopic Extended-A (U+AB01...), the Ethiopic gemination marks
(U+135D), Tibetan's subjoined letters U+0F8D-0F8F, Adlam, Georgian Mtavruli, the CJK extensions C-G,
Cherokee's small letters. Real names written in them were refused. The table is pinned to one Unicode
version (named in the file) and is the same wherever the gateway runs, whichever SWI-Prolog it finds.

Run ``python -m sentinel_mcp.policy.unicode_table`` to write it again (tests/policy/test_unicode_categories.py
checks every code point against this Python's ``unicodedata``).
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

TABLE = Path(__file__).parent / "prolog" / "unicode_categories.pl"
BLOCK = 256  # code points per fact: a lookup is one indexed fact and a walk of at most its runs

HEADER = """\
/*  Unicode {version} general categories, written by sentinel_mcp/policy/unicode_table.py: do not edit.
    uc_block(Block, Category): every code point of Block (its code >> 8) has Category;
    uc_block(Block, runs([Offset-Category, ...])): from each Offset (code /\\ 255) on, Category.
    A block with no fact is unassigned (Cn). */
:- module(unicode_categories, [uc_category/2]).

%  uc_category(+Code, -Category): the general category of an integer code point 0..0x10FFFF ('Cn' when
%  unassigned).
uc_category(C, K) :-
    B is C >> 8,
    (   uc_block(B, V) -> true ; V = 'Cn' ),
    (   V = runs(Rs) -> O is C /\\ 255, uc_run(Rs, O, 'Cn', K) ; K = V ).

uc_run([], _, K, K).
uc_run([S-K1|Rs], O, K0, K) :- ( S =< O -> uc_run(Rs, O, K1, K) ; K = K0 ).

"""


def block_fact(block: int) -> str | None:
    runs: list[tuple[int, str]] = []
    for offset in range(BLOCK):
        k = unicodedata.category(chr(block * BLOCK + offset))
        if not runs or runs[-1][1] != k:
            runs.append((offset, k))
    if runs == [(0, "Cn")]:
        return None
    if len(runs) == 1:
        return f"uc_block({block}, '{runs[0][1]}')."
    return f"uc_block({block}, runs([{', '.join(f'{o}-{k!r}' for o, k in runs)}]))."


def table_text() -> str:
    facts = [f for f in (block_fact(b) for b in range(0x110000 // BLOCK)) if f is not None]
    return HEADER.format(version=unicodedata.unidata_version) + "\n".join(facts) + "\n"


def main() -> None:
    TABLE.write_text(table_text(), encoding="utf-8")
    print(f"wrote {TABLE} (Unicode {unicodedata.unidata_version})")


if __name__ == "__main__":
    main()
