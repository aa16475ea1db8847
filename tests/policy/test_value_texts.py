"""How a value reads in a question (readable_terms.pl), asserted text by text against the rule written out
here: a text made only of [A-Za-z0-9_.#@+-] (not empty) reads bare; any other reads as one quoted value
“…” with only the backslash, every double quotation mark drawn like one, and line feeds and carriage returns
escaped; text(Template, Args) fills a rulebase template with its values read so. The forged values of
tests/support/forged_values.py and random texts over the characters that matter, as atoms and as strings.

And what it costs, counted (never timed): telling a value is bare, or quoting one that holds nothing to
escape, is one pass inside SWI-Prolog, not a Prolog step per character; a plain template (~w and ~~ only)
is read once and joined after, not parsed again on every decision."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.prolog_text import quote_atom
from tests.support.forged_values import ATTACKS

pytestmark = pytest.mark.timeout(120)

BARE = re.compile(r"[A-Za-z0-9_.#@+\-]+")
CLOSERS = "\\\"\u00ab\u00bb\u02ba\u02ee\u201c\u201d\u201e\u201f\u2033\u2036\u3003\u301d\u301e\u301f\uff02"
HONEST = ["HKEG34", "2024-05-27", "ann@example.com", "Blue mug, large", "Caf\u00e9 Zo\u00eb", "O'Brien's",
          "\u65e5\u672c\u8a9e", "New York", "a", "_", "-", "1.5", "x+y#z", " ", "a b", "\u00e9", "\U0001f600"]
# the characters that matter: bare ones, each closer, line breaks, look-alikes left alone, hidden ones
ALPHABET = ["a", "Z", "0", "_", ".", "#", "@", "+", "-", " ", "\n", "\r", "\t", "'", "\u2019", "\u300d",
            "\u2028", "\u200b", "\u202e", "\x7f", "\U0001f600", "\u00e9", ",", "~", "w", *CLOSERS]


def expected(value: str) -> str:
    if BARE.fullmatch(value):
        return value
    escaped = "".join("\\n" if c == "\n" else "\\r" if c == "\r" else "\\" + c if c in CLOSERS else c
                      for c in value)
    return f"\u201c{escaped}\u201d"


def values() -> list[str]:
    rnd = random.Random(8)
    made = ["".join(rnd.choice(ALPHABET) for _ in range(rnd.randint(1, 12))) for _ in range(400)]
    bare = ["".join(rnd.choice(ALPHABET[:9]) for _ in range(rnd.randint(1, 40))) for _ in range(100)]
    return [*ATTACKS, *HONEST, *made, *bare]


def prolog_text(value: str, kind: str) -> str:
    """The value as Prolog source: an atom, or a string (a JSON string reaches the rulebase as an atom; a
    rulebase's own string is a string)."""
    return quote_atom(value) if kind == "atom" else f"string({quote_atom(value)})"


@pytest.fixture
async def guard(tmp_path: Path) -> Any:
    rb = tmp_path / "texts.pl"
    rb.write_text("guard('t__x', [v = V], ( V \\== '' )).\n")
    g = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await g.start(watch=False)
    assert g.problem is None, g.problem
    yield g
    await g.close()


async def _texts(guard: PolicyGuard, terms: list[str]) -> list[str]:
    """readable/2 of each term (string(A) made a string first), as the list of texts."""
    goal = (f"findall(T, ( member(X0, [{', '.join(terms)}]), "
            "( X0 = string(A) -> atom_string(A, X) ; X = X0 ), "
            "sentinel_core:readable(X, T0), atom_string(T0, T) ), Ts)")
    rows = await guard.engine.run(lambda p: list(p.query(goal, maxresult=1)))
    return [t.decode() if isinstance(t, bytes) else str(t) for t in rows[0]["Ts"]]


@pytest.mark.parametrize("kind", ["atom", "string"])
async def test_every_value_reads_as_the_rule_says(guard: PolicyGuard, kind: str) -> None:
    vs = values()
    got = await _texts(guard, [prolog_text(v, kind) for v in vs])
    assert len(got) == len(vs)
    wrong = [(v, g, expected(v)) for v, g in zip(vs, got) if g != expected(v)]
    assert not wrong, wrong[:5]
    # the empty text is no bare word: it reads as an empty quoted value
    assert await _texts(guard, [prolog_text("", kind)]) == ["\u201c\u201d"]


async def test_a_template_is_filled_with_its_values_read_so(guard: PolicyGuard) -> None:
    rnd = random.Random(21)
    vs = values()
    templates = ["~w (~w)", "~w: ~w to ~w, ~w, first flight ~w~w", "$~w to the original ~~w ~w", "~w", "",
                 "plain", "~w~~", "\u00e9 ~w \u201c~w\u201d"]
    cases, wanted = [], []
    for _ in range(300):
        t = rnd.choice(templates)
        args = [rnd.choice(vs) for _ in range(t.replace("~~", "").count("~w"))]
        kinds = [rnd.choice(["atom", "string"]) for _ in args]
        cases.append(f"text({quote_atom(t)}, [{', '.join(prolog_text(a, k) for a, k in zip(args, kinds))}])")
        it = iter(args)
        wanted.append(re.sub("~~|~w", lambda m: "~" if m.group(0) == "~~" else expected(next(it)), t))
    # string(A) inside the list: made strings by a walk first
    goal = (f"findall(T, ( member(text(F, As0), [{', '.join(cases)}]), "
            "maplist([X0, X]>>( X0 = string(A) -> atom_string(A, X) ; X = X0 ), As0, As), "
            "sentinel_core:readable(text(F, As), T0), atom_string(T0, T) ), Ts)")
    rows = await guard.engine.run(lambda p: list(p.query(goal, maxresult=1)))
    got = [t.decode() if isinstance(t, bytes) else str(t) for t in rows[0]["Ts"]]
    wrong = [(c, g, w) for c, g, w in zip(cases, got, wanted) if g != w]
    assert len(got) == len(wanted) and not wrong, wrong[:3]
    # a number, a float and a marked text inside a template read as before (the general path for the float)
    mixed = await _texts(guard, ["text('~w ~w ~w ~w', [7, 2.5, text('a b'), 'a b'])"])
    assert mixed == ["7 2.5 a b \u201ca b\u201d"]
    # a template that could run a goal or make a huge text is refused, plain or not
    for bad in ["~@", "~999999999c", "~w ~t~999999999|"]:
        q = (f"catch(( sentinel_core:readable(text({quote_atom(bad)}, [a]), _), E = none ), "
             "error(E0, _), E = E0)")
        rows = await guard.engine.run(lambda p, q=q: list(p.query(q, maxresult=1)))
        assert str(rows[0]["E"]).startswith("domain_error(safe_text_template"), (bad, rows)


async def test_a_nul_is_no_bare_character(guard: PolicyGuard) -> None:
    # split_string/4 takes NUL for one of any set in a one-byte text (C's end of string); read back as codes
    # (a text with a NUL does not come back whole through the query interface)
    cases = {"[0'a, 0, 0'b]": [0x201C, 97, 0, 98, 0x201D], "[0]": [0x201C, 0, 0x201D],
             "[0'a, 0, 0'\\n]": [0x201C, 97, 0, 92, 110, 0x201D], "[0x100, 0]": [0x201C, 0x100, 0, 0x201D]}
    for codes, wanted in cases.items():
        goal = f"atom_codes(A, {codes}), sentinel_core:readable(A, T), atom_codes(T, Cs)"
        rows = await guard.engine.run(lambda p, goal=goal: list(p.query(goal, maxresult=1)))
        assert list(rows[0]["Cs"]) == wanted, (codes, rows)


async def test_every_code_point_alone_and_beside_others(guard: PolicyGuard) -> None:
    # the one-pass tests (split_string/4 inside SWI-Prolog) against the rule, code point by code point: bare
    # exactly for the set, and a quoted value exactly as the code-by-code walk quotes it; each code alone,
    # after a one-byte letter, and after a wide character (SWI-Prolog keeps those texts differently)
    codes = [*range(0, 0x3100), *range(0xFE00, 0xFF10), 0x1F600, 0x10FFFF]
    goal = (f"findall(P-C, ( member(C, {codes}), member(P, [[], [0'a], [0x100]]), append(P, [C], Cs), "
            "atom_codes(A, Cs), sentinel_core:readable(A, T), T == A ), Bare), "
            f"findall(P-C, ( member(C, {codes}), member(P, [[], [0'a], [0x100]]), append(P, [C], Cs), "
            "atom_codes(A, Cs), sentinel_core:readable(A, T), T \\== A, "
            "phrase(sentinel_core:quoted_codes(Cs), Out), atom_codes(Q, Out), "
            "atomic_list_concat(['\\u201C', Q, '\\u201D'], T2), T \\== T2 ), Wrong)")
    rows = await guard.engine.run(lambda p: list(p.query(goal, maxresult=1)))
    bare = {(str(p), int(c)) for p, c in (re.match(r"-\((\[.*?\]), (\d+)\)", str(x)).groups()  # type: ignore[union-attr]
                                          for x in rows[0]["Bare"])}
    wanted = {(p, c) for c in codes if BARE.fullmatch(chr(c)) for p in ("[]", "[97]")}
    assert bare == wanted, sorted(bare ^ wanted)[:10]
    assert list(rows[0]["Wrong"]) == [], rows[0]["Wrong"][:10]


async def _inferences(guard: PolicyGuard, term: str) -> int:
    """SWI-Prolog inferences of readable/2 of the term, the second time (any memo filled by the first)."""
    goal = (f"X = {term}, ( X = text(F, [string(A)]) -> atom_string(A, S), Y = text(F, [S]) ; Y = X ), "
            "sentinel_core:readable(Y, _), statistics(inferences, I0), sentinel_core:readable(Y, _), "
            "statistics(inferences, I1), N is I1 - I0")
    rows = await guard.engine.run(lambda p: list(p.query(goal, maxresult=1)))
    return int(rows[0]["N"])


async def test_a_long_value_costs_what_a_short_one_does(guard: PolicyGuard) -> None:
    # bare (at most 64 characters): one pass in C, whatever its length
    short, long = await _inferences(guard, "ab1"), await _inferences(guard, quote_atom("ab1-" * 16))
    assert long == short, (short, long)
    # past 64 the same characters are quoted (a question cuts a value inside its quotes): one pass too
    short = await _inferences(guard, quote_atom("ab1-" * 17))
    long = await _inferences(guard, quote_atom("ab1-" * 500))
    assert long == short, (short, long)
    # quoted with nothing to escape: the same, short (its bare check tried) and long (past 64, not tried)
    short, long = await _inferences(guard, "'a b'"), await _inferences(guard, quote_atom("a b, " * 12))
    assert long == short, (short, long)
    short = await _inferences(guard, quote_atom("a b, " * 13))
    long = await _inferences(guard, quote_atom("a b, " * 500))
    assert long == short, (short, long)
    # a long plain template: read once, joined after (its parts, not its characters)
    t_short = await _inferences(guard, "text('~w (~w)', [a, b])")
    t_long = await _inferences(guard, f"text({quote_atom('x' * 2000 + ' ~w (~w)')}, [a, b])")
    assert t_long == t_short, (t_short, t_long)
