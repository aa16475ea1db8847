"""Every problem of a rulebase file is named with its file and line, and one bad clause loses no other.

A body that is not a goal (``a :- 1.``), a grammar rule SWI-Prolog cannot translate (``a --> 1.``) or a
declaration of the wrong shape (``fact(p/(-1))``) stopped the whole load with "loading stopped" at line 0:
the clause's line was not said, and no later clause was checked. A declaration the loader let through in a
shape the gateway cannot read (``read_only(f(x))``, ``symbolic_exempt(t, X)``) failed the trial run with a
raw Prolog exception, or was misread (``symbolic_exempt(t, ab)`` exempted the arguments "a" and "b"), and a
binding's ``ttl(1.0Inf)`` or a choice of ``1.0Inf`` made the engine write JSON no reader takes (the check
raised JSONDecodeError)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(120)

BAD = [
    "a1 :- 1.",
    "a2 :- (true, 1).",
    "a3 :- \\+ 1.",
    "a4 :- (1 -> 2 ; 3).",
    "a5 --> 1.",
    "a6 --> [x|y].",
    "a7 --> {1}.",
    "fact(p/(-1)).",
    "fact(1/1).",
    "fact(q/a).",
    "read_only(1).",
    "read_only(f(x)).",
    "effect(f(x), [], []).",
    "effect(t, x, []).",
    "symbolic_exempt(t, ab).",
    "symbolic_exempt(1, [a]).",
    "symbolic_exempt(t, [1]).",
    "symbolic_exempt(t, _).",
    "guard(t1, [a = _, 1], true).",
    "guard(t2, [1 = _], true).",
    "binding(p1(X), tool(t, [a = X]), extract([X = a]), [ttl(1.0Inf)]).",
    "binding(p2(X), tool(t, [1]), extract([X = a]), []).",
    "binding(p3(X), tool(t, [f(a) = X]), extract([X = a]), []).",
    'askable(q1(_), "Q?", choice([1.0Inf]), []).',
    'askable(q2(_), "Q?", choice([a - 1.0Inf]), []).',
    'askable(q3(_), "Q?", choice([1.5NaN - a]), []).',
    'askable(q4(_), "Q?", number, [unknown(as(1.0Inf))]).',
    "seed(s(1.0Inf)).",
]


async def test_each_bad_clause_is_named_at_its_line_and_the_rest_is_still_checked(tmp_path: Path) -> None:
    f = tmp_path / "rb.pl"
    f.write_text("fact(ok/1).\n" + "\n".join(BAD) + "\nlast_one :- shell(x).\n")
    problems = await check_files(shared_engine(), [f])
    assert not [p for p in problems if p.line == 0], problems
    errors = {p.line for p in problems if p.severity == "error"}
    for i, clause in enumerate(BAD, start=2):
        assert i in errors, (clause, problems)
    last = len(BAD) + 2  # nothing after a bad clause is lost: the last clause is checked too
    assert any(p.line == last and "shell/1" in p.message for p in problems), problems


@pytest.mark.parametrize("clause", [
    "binding(p(X), tool(t, [a = X]), extract([X = a]), [ttl(1.0Inf)]).",
    "read_only(f(x)).",
    "effect(f(x), [], []).",
    "symbolic_exempt(t, _).",
    "symbolic_exempt(t, ab).",
    'askable(q(_), "Q?", choice([1.0Inf]), []).',
    'askable(q(_), "Q?", choice([a - 1.5NaN]), []).',
])
async def test_a_declaration_alone_is_an_error_at_its_line(tmp_path: Path, clause: str) -> None:
    f = tmp_path / "rb.pl"
    f.write_text("fact(ok/1).\n" + clause + "\n")
    problems = await check_files(shared_engine(), [f])
    assert {p.line for p in problems if p.severity == "error"} == {2}, problems


@pytest.mark.parametrize(("first", "second", "words"), [
    ("option(inference_limit(100)).", "option(inference_limit(1000000)).", "declared again"),
    ('askable(q(X), "First?", yes_no, [ttl(10)]).', 'askable(q(X), "Second?", yes_no, [ttl(1000)]).',
     "never asks anything"),
    ('askable(q(X), "First?", yes_no, [ttl(10)]).', 'askable(q(a), "Second?", yes_no, [ttl(1000)]).',
     "never asks anything"),
])
async def test_a_setting_declared_twice_is_an_error_naming_the_first(tmp_path: Path, first: str,
                                                                     second: str, words: str) -> None:
    """The gateway read the first of two silently (another file's, maybe): which was meant is unknowable. An
    askable whose questions an earlier one asks (the same head, or a narrower one) would never ask."""
    a, b = tmp_path / "a.pl", tmp_path / "b.pl"
    a.write_text("fact(ok/1).\n" + first + "\n")
    b.write_text(":- multifile q/1.\n\n" + second + "\n")
    a2 = tmp_path / "one.pl"
    a2.write_text(first + "\n" + second + "\n")
    for files, where in (([a2], (a2, 2, a2, 1)), ([a, b], (b, 3, a, 2))):
        problems = await check_files(shared_engine(), files)
        said, line, named, named_line = where
        assert any(p.file == str(said) and p.line == line and p.severity == "error" and words in
                   p.message and f"{named} (line {named_line})" in p.message for p in problems), problems


async def test_askables_of_one_predicate_for_different_questions_load(tmp_path: Path) -> None:
    """Askables whose heads ask different questions of one predicate each ask their own (the first whose
    head covers a question asks it): not an error, and neither is a general one after specific ones."""
    f = tmp_path / "rb.pl"
    f.write_text('askable(label(colour, X, C), "Colour of ~w?", choice([red, green]), [from([user])]).\n'
                 'askable(label(owner, X, O), "Owner of ~w?", text, [from([user])]).\n'
                 'askable(label(K, X, V), "~w of ~w?", text, [from([user])]).\n'
                 "guard(w, [a = A], label(colour, A, red)).\n")
    problems = await check_files(shared_engine(), [f])
    assert not [p for p in problems if p.severity == "error"], problems


@pytest.mark.parametrize("other", [
    "binding(p(X), tool(t, []), extract([X = a]), []).",
    "seed(p(x)).",
    "fact(p/1).",
    "effect(w, [a = A], [establish(p(A))]).",
])
async def test_an_askable_predicate_has_no_other_source(tmp_path: Path, other: str) -> None:
    """A tool's result (or a seed, or a write's effect) made facts of a predicate only the user answers."""
    f = tmp_path / "rb.pl"
    f.write_text('askable(p(_), "Q?", text, [from([user])]).\n' + other
                 + "\nguard(w, [a = A], (p(G), require(A == G, x))).\n")
    problems = await check_files(shared_engine(), [f])
    assert any(p.line == 2 and p.severity == "error" and "askable" in p.message for p in problems), problems
