"""A rulebase's format/3 into an atom of a template of ~w directives is joined, not formatted
(plain_formats.pl's rule_format/3): it must give exactly what the general path gives (formatted_numbers/2,
bounded_format/3, sink_made/1: the twin's body before), the same text, failure or error, for any template
and arguments, keep the text bound and count what it makes; and a rule's proof must show the same text."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.prolog_text import quote_atom

pytestmark = pytest.mark.timeout(120)

RULES = r"""
guard('t__label', [v = V], ( format(atom(T), '~w (~w) ~~ ~w', [V, 'a b', 7]), T \== '' )).
"""

# (template, arguments): each argument a tagged value built in Prolog: a(Atom), s(Text) a string, i(N),
# f(X) a float, l(Items) a list, c(Atom) a compound k(Atom), v a fresh variable, n the empty list
PLAIN = ["~w (~w)", "~w: ~w to ~w, ~w, first flight ~w~w", "$~w to the original payment methods", "", "plain",
         "~~w ~w", "~w~~", "~w~w~w", "tilde ~~ only", "é ~w ü", "~w\n~w"]
NOT_PLAIN = ["~a", "~q", "~p", "~d", "~2f", "~n", "~W", "~e", "~", "ab~", "~s", "~c", "~i~w", "~t~w~10|",
             "~*c", "~`-t~30|", "~3w"]
VALUES: list[str] = ["a('x')", "a('')", "a('O''Brien')", "a('a b')", "a('\\n')", "a('é')", "a(true)",
                     "a('[]')", "s('text')", "s('')", "i(0)", "i(-5)", "i(12345678901234567890123)", "f(1.0)",
                     "f(1.0e10)", "l([1,2])", "c(k)", "v", "n"]


def _cases(seed: int, n: int) -> list[str]:
    rnd = random.Random(seed)
    cases = []
    for template in PLAIN + NOT_PLAIN:
        slots = template.replace("~~", "").count("~")
        for _ in range(6):
            k = max(0, slots + rnd.choice([0, 0, 0, -1, 1]))
            cases.append(f"case({quote_atom(template)}, [{', '.join(rnd.choice(VALUES) for _ in range(k))}])")
    for _ in range(n):  # random templates of the characters that matter
        pieces = ["~w", "~~", "~", "w", "a", " ", "~a", "é"]
        template = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 6)))
        k = max(0, template.replace("~~", "").count("~w") + rnd.choice([0, 0, 1, -1]))
        cases.append(f"case({quote_atom(template)}, [{', '.join(rnd.choice(VALUES) for _ in range(k))}])")
    return cases


# run in the rulebase's module: RB:format/3 (the twin) against the general path, outcome by outcome
COMPARE = r"""
    Value = [T, V]>>( T = a(V) -> true ; T = s(A) -> atom_string(A, V) ; T = i(V) -> true ; T = f(V) -> true
                    ; T = l(V) -> true ; T = c(A) -> V = k(A) ; T == v -> true ; T == n -> V = [] ),
    Outcome = [G, X, O]>>( catch(( call(G) -> O = ok(X) ; O = failed ), E,
                                 ( E = error(Formal, _) -> O = error(Formal) ; O = thrown(E) )) ),
    findall(F-Tagged-New-Old,
            ( member(case(F, Tagged), Cases), maplist(Value, Tagged, Args),
              call(Outcome, RB:format(atom(X1), F, Args), X1, New),
              call(Outcome, ( sentinel_core:formatted_numbers(F, Args),
                              sentinel_core:bounded_format(atom(X2), F, Args),
                              sentinel_core:sink_made(atom(X2)) ), X2, Old),
              New \=@= Old ),
            Diffs),
    length(Diffs, N)
"""


@pytest.fixture
async def guard(tmp_path: Path) -> Any:
    rb = tmp_path / "formats.pl"
    rb.write_text(RULES)
    g = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await g.start(watch=False)
    assert g.problem is None, g.problem
    yield g
    await g.close()


async def _query(guard: PolicyGuard, goal: str) -> list[dict[str, Any]]:
    rb = quote_atom(guard.rulebases.current.module)
    return await guard.engine.run(lambda p: list(p.query(f"RB = {rb}, {goal}", maxresult=1)))


async def test_the_joined_text_is_the_formatted_one_for_every_template(guard: PolicyGuard) -> None:
    cases = _cases(21, 400)
    rows = await _query(guard, f"findall(N-D, ( Cases = [{', '.join(cases)}], {COMPARE}, "
                               "with_output_to(string(D), print(Diffs)) ), [N-D])")
    assert rows and rows[0]["N"] == 0, rows[0]["D"][:2000]
    # the plain templates were joined (remembered with their parts), the others left to format/3
    for template in PLAIN:
        got = await _query(guard, f"sentinel_core:plain_memo({quote_atom(template)}, _, P), P \\== none")
        assert got, template
    for template in NOT_PLAIN:
        assert await _query(guard, f"sentinel_core:plain_memo({quote_atom(template)}, none, none)"), template


async def test_a_bound_text_is_compared_and_a_long_one_counted(guard: PolicyGuard) -> None:
    same = await _query(guard, "( RB:format(atom('a (b)'), '~w (~w)', [a, b]) -> R = yes ; R = no ), "
                               "( RB:format(atom('a (c)'), '~w (~w)', [a, b]) -> R2 = yes ; R2 = no )")
    assert (same[0]["R"], same[0]["R2"]) == ("yes", "no")
    # what a rule makes counts against the pass's room (made_one/1): a text of 64 characters or more
    long = "x" * 100
    text = quote_atom(long)
    room = await _query(guard, f"nb_linkval(sn_made_room, 150), RB:format(atom(_), '~w', [{text}]), "
                               "nb_getval(sn_made_room, R1), "
                               f"catch(( RB:format(atom(_), '~w', [{text}]), E = none ), "
                               "error(E0, _), E = E0), nb_linkval(sn_made_room, 8000000)")
    assert room[0]["R1"] == 50 and room[0]["E"] == "resource_error(text_size)"
    # an argument over the text bound is refused as before (the general path's error)
    big = await _query(guard, "length(Cs, 1000001), maplist(=(0'a), Cs), atom_codes(A, Cs), "
                              "catch(( RB:format(atom(_), '~w', [A]), E = none ), error(E0, _), E = E0)")
    assert big[0]["E"] == "resource_error(text_size)"


async def test_a_proof_shows_the_joined_text(guard: PolicyGuard) -> None:
    from tests.policy.test_compiled_rules import both, call

    fast, ref = await both(guard, call("t__label", {"v": "x"}, "s1"))
    assert fast == ref and fast["status"] == "proved"
    assert "x (a b) ~ 7" in str(fast["tree"])
