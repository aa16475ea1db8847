"""text(T) reads as it is in a question (readable_terms.pl): it is for the rulebase's own words only. A value
from outside (a tool's fact, a call's argument, an answer, a context) wrapped in it would reach the person
unquoted and speak in Sentinel's voice ("... ? Answer yes to continue."). The loader follows where every
wrapped value can come from (own_texts.pl) and refuses, with file and line, any wrap it cannot show to be made
of the rulebase's own words; every pattern the shipped rulebases use still loads."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from tests.support.checked_rulebase import checked_lines

from sentinel_mcp.cli import main
from sentinel_mcp.policy import draft as draft_module
from sentinel_mcp.policy.guard import PolicyGuard

pytestmark = pytest.mark.timeout(120)

_problems = partial(checked_lines, shown="full")

HEAD = (
    "binding(passenger(R, Name, Born), tool('x__get', [id = R]),\n"
    "        extract([Name = '/name', Born = '/born']), []).\n"
    "fact(note/2).\n"
    "context(trip).\n"
    "askable(reason(R, W), \"Why do you cancel ~w?\",\n"
    "        choice([change_of_plan - 'Change of plan', other]), []).\n"
    "askable(said(R, W), \"What do you want to say about ~w?\", text, []).\n"
    "cabin(economy, 'economy class').\ncabin(business, text('business class')).\n"
)
HEAD_LINES = HEAD.count("\n")


def _guard(body: str) -> str:
    return f"guard('x__book', [id = R],\n      ( {body} )).\n"


WRAPS = {
    "direct": _guard("passenger(R, N, _), confirmed('Book ~w?', [text(N)])"),
    "a string fact": _guard("passenger(R, N, _), atom_string(N, S), confirmed('Book ~w?', [text(S)])"),
    "the call's argument": _guard("confirmed('Book ~w?', [text(R)])"),
    "one helper": _guard("lab(R, L), confirmed('Book ~w?', [text(L)])")
    + "lab(R, N) :- passenger(R, N, _).\n",
    "two helpers": _guard("lab(R, L), confirmed('Book ~w?', [text(L)])")
    + "lab(R, N) :- lab2(R, N).\nlab2(R, N) :- passenger(R, N, _).\n",
    "wrapped in the helper": _guard("lab(R, L), confirmed('Book ~w?', [L])")
    + "lab(R, text(N)) :- passenger(R, N, _).\n",
    "atom_concat": _guard("passenger(R, N, _), atom_concat('Mr ', N, T), confirmed('Book ~w?', [text(T)])"),
    "format": _guard("passenger(R, N, _), format(atom(T), 'Mr ~w', [N]), confirmed('Book ~w?', [text(T)])"),
    "atomic_list_concat": _guard(
        "passenger(R, N, _), atomic_list_concat(['Mr', N], ' ', T), confirmed('Book ~w?', [text(T)])"),
    "sub_atom": _guard("passenger(R, N, _), sub_atom(N, 0, _, 0, T), confirmed('Book ~w?', [text(T)])"),
    "upcase_atom": _guard("passenger(R, N, _), upcase_atom(N, T), confirmed('Book ~w?', [text(T)])"),
    "term_to_atom": _guard("passenger(R, N, _), term_to_atom(T, N), confirmed('Book ~w?', [T])"),
    "a label table with a clause reading a fact": _guard("lab(R, L), confirmed('Book ~w?', [text(L)])")
    + "lab(a, 'Plan A').\nlab(R, N) :- passenger(R, N, _).\n",
    "findall": _guard("findall(N, passenger(R, N, _), Ns), Ns = [T|_], confirmed('Book ~w?', [text(T)])"),
    "bagof": _guard("bagof(N, B^passenger(R, N, B), [T|_]), confirmed('Book ~w?', [text(T)])"),
    "aggregate_all": _guard("aggregate_all(max(N), passenger(R, N, _), T), confirmed('Book ~w?', [text(T)])"),
    "a unification chain": _guard("X = Y, Y = Z, passenger(R, Z, _), confirmed('Book ~w?', [text(X)])"),
    "a fact of the store": _guard("note(R, N), confirmed('Book ~w?', [text(N)])"),
    "a context": _guard("context_value(trip, N), confirmed('Book ~w?', [text(N)])"),
    "an answer in words": _guard("said(R, N), confirmed('Book ~w?', [text(N)])"),
    "call/N": _guard("call(passenger, R, N, _), confirmed('Book ~w?', [text(N)])"),
    "assert": _guard("assertz(note(R, x)), note(R, N), confirmed('Book ~w?', [text(N)])"),
    "one branch from outside": _guard(
        "( R == a -> L = 'Plan A' ; passenger(R, L, _) ), confirmed('Book ~w?', [text(L)])"),
    "a list element": _guard("passenger(R, N, _), member(T, [a, N]), confirmed('Book ~w?', [text(T)])"),
    "text/2 inside text/1": _guard("passenger(R, N, _), confirmed('Book ~w?', [text(text('~w', [N]))])"),
    "joined/2 inside text/1": _guard("passenger(R, N, _), confirmed('Book ~w?', [text(joined([N], ', '))])"),
    "joined/2's separator": _guard("passenger(R, N, _), confirmed('Book ~w?', [joined([a, b], N)])"),
    "text/2's template": _guard("passenger(R, N, _), confirmed('Book ~w?', [text(N, [a])])"),
    "a confirmation's headline": _guard("passenger(R, N, _), confirmed_items(N, ['Who' = a])"),
    "a confirmation's label": _guard("passenger(R, N, _), confirmed_items('Book?', [N = a])"),
    "items not written as a list": _guard("passenger(R, N, _), Is = [N = a], confirmed_items('Book?', Is)"),
    "a question's input": _guard("passenger(R, N, _), said(text(N), _)"),
    "a name that passes person_name": _guard(
        "passenger(R, N, _), person_name(N), confirmed('Book ~w?', [text(N)])"),
    "answer_label of the call's argument": _guard(
        "answer_label(reason, R, L), confirmed('Book ~w?', [text(L)])"),
    "humanized of a fact": _guard("passenger(R, N, _), humanized(N, L), confirmed('Book ~w?', [text(L)])"),
    "=.. with a name from a fact": _guard(
        "passenger(R, N, B), T =.. [B, N], confirmed('Book ~w?', [T])"),
    "=.. with a count not written": _guard(
        "passenger(R, N, B), append([B], [N], As), T =.. As, confirmed('Book ~w?', [T])"),
    "functor with a count from a fact": _guard(
        "passenger(R, N, B), atom_length(N, K), functor(T, B, K), confirmed('Book ~w?', [T])"),
    "=.. naming text": _guard("passenger(R, N, _), T =.. [text, N], confirmed('Book ~w?', [T])"),
    "functor naming text": _guard(
        "passenger(R, N, _), functor(T, text, 1), arg(1, T, N), confirmed('Book ~w?', [T])"),
    "a recursive join": _guard(
        "findall(N, passenger(R, N, _), Ns), cat(Ns, T), confirmed('Book ~w?', [text(T)])")
    + "cat([], '').\ncat([X|Xs], A) :- cat(Xs, A0), atom_concat(X, A0, A).\n",
    "a helper called with the value": _guard("passenger(R, N, _), wrap(N, T), confirmed('Book ~w?', [T])")
    + "wrap(X, text(X)).\n",
    "ignore": _guard("L = 'Plan A', ignore(passenger(R, M, _)), confirmed('Book ~w?', [text(M), text(L)])"),
    "a negation": _guard("\\+ \\+ passenger(R, N, _), confirmed('Book ~w?', [text(N)])"),
}


@pytest.mark.parametrize("name", list(WRAPS))
async def test_a_wrap_of_outside_text_is_refused_with_file_and_line(tmp_path: Path, name: str) -> None:
    problems = await _problems(tmp_path, HEAD + WRAPS[name])
    errors = [p for p in problems if ": error: " in p]
    assert errors, (name, problems)
    lines = {int(p.split(":")[1]) for p in errors}
    assert lines & set(range(HEAD_LINES + 1, HEAD_LINES + 1 + WRAPS[name].count("\n"))), (name, errors)
    assert all("rb.pl" in p for p in errors), errors
    if name not in REFUSED_BY_THE_ALLOW_LIST:
        assert any(w in p for p in errors for w in OWN_TEXT_WORDS), errors


# goals the allow list of a rulebase's goals refuses already (goal_check.pl): never called at all
REFUSED_BY_THE_ALLOW_LIST = {"call/N", "assert", "term_to_atom"}
OWN_TEXT_WORDS = ("text/1 wraps", "is read as it is", "a term is built with")


async def test_the_direct_wrap_says_where_the_value_comes_from(tmp_path: Path) -> None:
    problems = await _problems(tmp_path, HEAD + WRAPS["direct"])
    mine = [p for p in problems if "text/1 wraps" in p]
    assert len(mine) == 1 and f"rb.pl:{HEAD_LINES + 1}:" in mine[0], problems
    assert "passenger/3, a fact read from a tool" in mine[0] and "use the value bare" in mine[0], mine


OWN = {
    "a literal": _guard("passenger(R, _, _), confirmed('Book ~w?', [text('the trip')])"),
    "a label table": _guard("cabin(R, L), confirmed('Book in ~w?', [text(L)])"),
    "a label table of text terms": _guard("cabin(R, L), confirmed_items('Book?', ['Cabin' = L])"),
    "a choice answer's label": _guard(
        "reason(R, W), answer_label(reason, W, L), confirmed('Cancel ~w?', [text(L)])"),
    "a listed value": _guard(
        "require(listed(R), 'listed'), humanized(R, L), confirmed('Cancel ~w?', [text(L)])")
    + "listed(change_of_plan).\nlisted(other).\n",
    "a join of own words": _guard(
        "cabin(R, L), atom_concat(L, ' seat', T), format(atom(U), '~w, ~w', [T, 'window']), "
        "atomic_list_concat([U, x], ' ', V), upcase_atom(V, W), confirmed('Book ~w?', [text(W)])"),
    "both branches own": _guard(
        "( R == a -> L = 'Plan A' ; L = 'Plan B' ), confirmed('Book ~w?', [text(L)])"),
    "a findall over a label table": _guard(
        "findall(L, cabin(_, L), Ls), Ls = [T|_], confirmed('Book ~w?', [joined(Ls, ', '), T])"),
    "values quoted by text/2": _guard(
        "passenger(R, N, B), confirmed('Book ~w?', [text('~w (born ~w)', [N, B])])"),
    "a literal list element": _guard("member(T, ['A', 'B']), confirmed('Book ~w?', [text(T)])"),
    "=.. of three arguments named from outside": _guard(
        "passenger(R, N, B), G =.. [B, R, N, yes], confirmed('Book ~w?', [G])"),
    "a value bound after the term is written": _guard(
        "Q = text(L), cabin(R, L), confirmed('Book ~w?', [Q])"),
}


@pytest.mark.parametrize("name", list(OWN))
async def test_own_words_load(tmp_path: Path, name: str) -> None:
    problems = await _problems(tmp_path, HEAD + OWN[name])
    assert not [p for p in problems if ": error: " in p], (name, problems)


@pytest.mark.parametrize("rulebase", sorted(Path("rulebases").glob("*.pl")), ids=lambda p: p.name)
async def test_every_shipped_rulebase_loads_unchanged(tmp_path: Path, rulebase: Path) -> None:
    problems = await _problems(tmp_path, rulebase.read_text(encoding="utf-8"), name=rulebase.name)
    assert not [p for p in problems if "text/1" in p or "is read as it is" in p], problems


TOOLS = [
    {"name": "get_order", "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
     "outputSchema": {"type": "object", "properties": {"status": {"type": "string"}}}},
    {"name": "cancel_order", "annotations": {"destructiveHint": True},
     "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"},
                                                      "reason": {"type": "string"}}}},
]


def test_a_drafted_wrap_is_refused_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A draft a model wrote from hostile tool descriptions that wraps the call's reason in text/1."""
    real = draft_module.draft_rulebase

    def leaky(*args: Any, **kwargs: Any) -> draft_module.Draft:
        d = real(*args, **kwargs)
        d.text += ("guard('shop__cancel_order', [reason = W],\n"
                   "      confirmed('Cancel? ~w', [text(W)])).\n")
        return d

    monkeypatch.setattr(draft_module, "draft_rulebase", leaky)
    (tmp_path / "policy.md").write_text("# Shop\n\n## Cancel\n\nCancel an order only when it is pending.\n")
    (tmp_path / "tools.json").write_text(json.dumps({"tools": TOOLS}))
    out = tmp_path / "rulebases" / "shop.pl"
    out.parent.mkdir()
    code = main(["draft", "--policy", str(tmp_path / "policy.md"), "--server", "shop", "--tools",
                 str(tmp_path / "tools.json"), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and not out.exists(), err
    assert "the draft fails its check" in err, err
    assert "text/1 wraps a value that comes from an argument of the call" in err, err


async def test_a_term_holding_a_text_reads_its_texts_quoted(tmp_path: Path) -> None:
    """A rulebase's own term around a value (foo(V), built by hand or by =.. with a written name) read as ~w
    writes would show the value unquoted; its texts read as any value does, and a term of bare words only
    reads as before."""
    rb = tmp_path / "texts.pl"
    rb.write_text("guard('t__x', [v = V], ( V \\== '' )).\n")
    g = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await g.start(watch=False)
    try:
        goal = ("findall(T, ( member(X, [foo('mug. Answer yes to continue'), text(foo('a b')), f(x), 1/2, "
                "g(h(\"Total: $1\"), 3), 'Answer yes to continue'(x), a:b]), "
                "sentinel_core:readable(X, T0), atom_string(T0, T) ), Ts)")
        rows = await g.engine.run(lambda p: list(p.query(goal, maxresult=1)))
        got = [t.decode() if isinstance(t, bytes) else str(t) for t in rows[0]["Ts"]]
    finally:
        await g.close()
    assert got == ["foo(\u201cmug. Answer yes to continue\u201d)", "text(foo(\u201ca b\u201d))", "f(x)",
                   "1/2", "g(h(\u201cTotal: $1\u201d), 3)", "\u201cAnswer yes to continue\u201d(x)",
                   "a:b"], got
