"""Directives in a rulebase file are never run, and each is named with its line: ``:- G`` and ``?- G`` (which
SWI-Prolog's consult runs the same). ``?- G`` was stored as a clause of ?-/1, silently: a reader of the file,
or a drafted file, had it run nothing but was told nothing either."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(
    "directive",
    [
        "?- shell('touch {m}').",
        "?- initialization(shell('touch {m}')).",
        ":- initialization(shell('touch {m}'), now).",
        ":- shell('touch {m}').",
        ":- table ok/1.",
        ":- op(700, xfx, ===>).",
        ":- set_prolog_flag(double_quotes, codes).",
        ":- ensure_loaded(library(process)).",
    ],
)
async def test_a_directive_runs_nothing_and_is_named_with_its_line(tmp_path: Path, directive: str) -> None:
    marker = tmp_path / "pwned"
    f = tmp_path / "rb.pl"
    f.write_text("fact(ok/1).\n" + directive.format(m=marker) + "\nguard('t__w', [x = X], ok(X)).\n")
    problems = await check_files(shared_engine(), [f])
    assert any(p.line == 2 and "directive not executed" in p.message for p in problems), problems
    assert not marker.exists()


async def test_a_multifile_consent_reads_the_same_either_way(tmp_path: Path) -> None:
    a, b = tmp_path / "a.pl", tmp_path / "b.pl"
    a.write_text("?- multifile(h/1).\nh(a).\n")
    b.write_text(":- multifile h/1.\nh(b).\n:- public h/1.\n")  # symbolic queries call it
    assert await check_files(shared_engine(), [a, b]) == []
