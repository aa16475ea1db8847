"""The declarations a rulebase may make of its predicates (``:- dynamic``, ``discontiguous``,
``multifile``, ``public``) name predicates a rulebase may define, as a clause's head must: Name/Arity, never
another module's, an internal ('$'), a builtin's or Sentinel's own. ``dynamic`` and ``discontiguous`` took
any term at all, silently (``:- dynamic(sentinel_core:foo/1)``, ``:- dynamic(_)``, ``:- dynamic foo``),
and all four took '$fact'/3, member/2 or now/1: the file read as if it declared something of the engine's,
and nothing said that it did not."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(90)

KINDS = ["dynamic", "discontiguous", "multifile", "public"]
# (spec, words the error says)
BAD = [
    ("sentinel_core:foo/1", "needs Name/Arity indicators"),
    ("user:portray/1", "needs Name/Arity indicators"),
    ("_", "needs Name/Arity indicators"),
    ("foo", "needs Name/Arity indicators"),
    ("foo/bar", "needs Name/Arity indicators"),
    ("[mine/1, system:shell/1]", "needs Name/Arity indicators"),
    ("foo/(-1)", "needs Name/Arity indicators"),
    ("'$fact'/3", "internal to Sentinel"),
    ("'$src'/4", "internal to Sentinel"),
    ("member/2", "the built-in member/2"),
    ("shell/1", "the built-in shell/1"),
    ("(mine/1, assertz/1)", "the built-in assertz/1"),
    ("now/1", "Sentinel's now/1"),
    ("require/2", "Sentinel's require/2"),
]


async def test_a_declaration_names_only_predicates_a_rulebase_may_define(tmp_path: Path) -> None:
    # one file, one directive a line (one load): each line has its own error, naming its kind and name
    lines = [(kind, spec, words) for kind in KINDS for spec, words in BAD]
    f = tmp_path / "declares.pl"
    f.write_text("fact(ok/1).\n" + "".join(f":- {kind}({spec}).\n" for kind, spec, _ in lines)
                 + "mine(X) :- ok(X).\nguard('t__w', [x = X], mine(X)).\n")
    problems = await check_files(shared_engine(), [f])
    errors = {p.line: p for p in problems if p.severity == "error"}
    assert sorted(errors) == list(range(2, len(lines) + 2)), problems
    for line, (kind, spec, words) in enumerate(lines, start=2):
        m = errors[line].message
        assert errors[line].file == str(f) and m.startswith(kind) and words in m, (kind, spec, m)


async def test_a_declaration_of_the_rulebases_own_predicates_loads(tmp_path: Path) -> None:
    f = tmp_path / "ok.pl"
    f.write_text("fact(ok/1).\n"
                 ":- dynamic(mine/1).\n:- discontiguous mine/1.\n:- dynamic([mine/1, other/2]).\n"
                 ":- discontiguous((mine/1, other/2)).\n:- multifile mine/1.\n:- public mine/1.\n"
                 ":- dynamic(ok/1).\n"  # a fact's own name: the declaration of what the rulebase owns
                 ":- dynamic(guard/3).\n"
                 # read as an indicator, never made a term of that many arguments
                 ":- dynamic(wide/100000000).\n"
                 "mine(X) :- ok(X).\nother(X, X).\nguard('t__w', [x = X], mine(X)).\n")
    problems = await check_files(shared_engine(), [f])
    assert [p for p in problems if p.severity == "error"] == [], problems
