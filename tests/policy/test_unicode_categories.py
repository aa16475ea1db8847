"""``unicode_category/2`` (the airline name rule's letter and mark tests) answers Unicode's category of every
code point as the gateway's Python does. It read SWI-Prolog's ``unicode_property/2``, whose tables are
Unicode 5.x: Ethiopic Extended-A (U+AB01), the Ethiopic gemination mark (U+135D), Tibetan's subjoined letters
U+0F8D-0F8F, Adlam (U+1E900) and newer letters were no letters, and names written with them were refused.
The table file is the one ``unicode_table.py`` writes (not edited by hand), and a real SWI-Prolog reads it
back, all 1,114,112 code points, as runs of one category."""

from __future__ import annotations

import shutil
import subprocess
import unicodedata

import pytest

from sentinel_mcp.paths import PROJECT_ROOT
from sentinel_mcp.policy.unicode_table import TABLE, table_text

RT = PROJECT_ROOT / "sentinel_mcp" / "policy" / "prolog" / "sentinel_rt.pl"
pytestmark = [pytest.mark.timeout(180),
              pytest.mark.skipif(shutil.which("swipl") is None, reason="SWI-Prolog is not installed")]

RUNS_GOAL = r"""
    forall(between(0, 0x10FFFF, C),
           ( ( unicode_category(C, K) -> true ; K = 'Cn' ),
             ( nb_current(prev, P), P == K -> true ; format("~d ~w~n", [C, K]), nb_setval(prev, K) ) )),
    halt.
"""


def _python_runs() -> list[str]:
    runs, prev = [], None
    for c in range(0x110000):
        k = unicodedata.category(chr(c))
        if k != prev:
            runs.append(f"{c} {k}")
            prev = k
    return runs


def test_the_table_file_is_the_one_the_generator_writes() -> None:
    assert TABLE.read_text(encoding="utf-8") == table_text()


def test_every_code_point_reads_as_pythons_category() -> None:
    out = subprocess.run(["swipl", "-q", "-g", f"use_module('{RT}')", "-g", "nb_setval(prev, none)",
                          "-g", RUNS_GOAL, "-t", "halt(1)"], capture_output=True, text=True, timeout=170,
                         check=True).stdout.splitlines()
    assert out == _python_runs()


@pytest.mark.parametrize("code, category", [(0xAB01, "Lo"), (0x135D, "Mn"), (0x0F8D, "Mn"), (0x1E900, "Lu"),
                                            (0x1C90, "Lu"), (0x2A700, "Lo"), (0x0664, "Nd"),
                                            (0x200C, "Cf")])
def test_letters_swi_prologs_own_tables_do_not_know(code: int, category: str) -> None:
    assert unicodedata.category(chr(code)) == category
    goal = f"use_module('{RT}'), ( unicode_category({code}, K) -> write(K) ; write(none) ), halt"
    out = subprocess.run(["swipl", "-q", "-g", goal, "-t", "halt(1)"], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert out == category
