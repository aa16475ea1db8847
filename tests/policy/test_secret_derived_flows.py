"""What a goal computes from a secret is as secret as the secret (secret_flows.pl, secret_flow_kind/2).

The loader follows a secret argument through every goal a rulebase may call: a value computed from it (a
count or a sum of its solutions, a list collected while testing it, its length, an order of it, a value bound
in a branch its comparison chose) may be compared, or kept in the proof, but never reaches a question, a
denial's reason or an askable. Before, all-solutions and aggregation (``aggregate_all(count, ...)``,
``findall``, ``bagof``, ``setof``), a measure (``atom_length/2``, ``compare/3``) and what followed from them
were clean, so ``aggregate_all(count, (member(C, Letters), C @< P), N)`` asked the person how many letters
sort before the password. And the whole argument list (``args(A)``) read by ``member/2``, ``memberchk/2``,
``select/3``, ``nth1/3``, ... with a secret key, or a key the loader cannot know (a variable), gave a clean
value. The taint table covers every goal the rulebase allow list admits: a goal admitted without a row there
fails ``test_every_admitted_goal_has_a_row``. Real SWI-Prolog."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_lines

from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(120)

_problems = partial(checked_lines, shown="full")
MINE = "the secret argument"
HEAD = (
    "binding(login_ok(U, P, Ok), tool('x__check', [user = U, password = P]), extract([Ok = '/ok']), []).\n"
    "askable(why(U, W), \"Why sign ~w in?\", text, []).\n"
    "fact(owner/2).\n"
)
HEAD_LINES = HEAD.count("\n")
LETTERS = "[a, b, c, d, e, f, g, h]"


def _guard(body: str, name: str = "password") -> str:
    return f"guard('x__login', [user = U, '{name}' = P],\n      ( {body} )).\n"


def _ask(of: str) -> str:
    return f"confirmed('Sign in (~w)?', [{of}])"


# each a value computed from the secret, reaching what a person reads
DERIVED = {
    "a count of comparisons": f"aggregate_all(count, (member(C, {LETTERS}), C @< P), N), {_ask('N')}",
    "a count under a rule": "below(P, N), " + _ask("N"),
    "a sum": f"aggregate_all(sum(I), (nth1(I, {LETTERS}, C), C @< P), S), {_ask('S')}",
    "a max": f"aggregate_all(max(I), (nth1(I, {LETTERS}, C), C @< P), S), {_ask('S')}",
    "a min": f"aggregate_all(min(I), (nth1(I, {LETTERS}, C), P @< C), S), {_ask('S')}",
    "a max witness": f"aggregate_all(max(I, C), (nth1(I, {LETTERS}, C), C @< P), S), {_ask('S')}",
    "a bag": f"aggregate_all(bag(C), (member(C, {LETTERS}), C @< P), S), {_ask('S')}",
    "a set": f"aggregate_all(set(C), (member(C, {LETTERS}), C @< P), S), {_ask('S')}",
    "findall": f"findall(C, (member(C, {LETTERS}), C @< P), L), {_ask('L')}",
    "findall/4": f"findall(C, (member(C, {LETTERS}), C @< P), L, []), {_ask('L')}",
    "bagof": f"bagof(C, (member(C, {LETTERS}), C @< P), L), {_ask('L')}",
    "setof": f"setof(C, (member(C, {LETTERS}), C @< P), L), {_ask('L')}",
    "setof with a caret": f"setof(C, X^(member(C-X, [a-1, b-2]), C @< P), L), {_ask('L')}",
    "length of a collected list": f"findall(x, (member(C, {LETTERS}), C @< P), L), length(L, N), {_ask('N')}",
    "msort": f"findall(C, (member(C, {LETTERS}), C @< P), L), msort(L, M), {_ask('M')}",
    "sort/4": f"findall(C, (member(C, {LETTERS}), C @< P), L), sort(0, @>=, L, M), {_ask('M')}",
    "nth0": f"findall(C, (member(C, {LETTERS}), C @< P), L), last(L, X), nth0(0, [X], Y), {_ask('Y')}",
    "nth1": f"findall(C, (member(C, {LETTERS}), C @< P), L), nth1(1, L, X), {_ask('X')}",
    "last": f"findall(C, (member(C, {LETTERS}), C @< P), L), last(L, X), {_ask('X')}",
    "sum_list": f"findall(1, (member(C, {LETTERS}), C @< P), L), sum_list(L, S), {_ask('S')}",
    "max_list": f"findall(I, (nth1(I, {LETTERS}, C), C @< P), L), max_list(L, S), {_ask('S')}",
    "atom_length": "atom_length(P, N), " + _ask("N"),
    "string_length": "string_length(P, N), " + _ask("N"),
    "arithmetic on a length": "atom_length(P, N), M is N * 2, " + _ask("M"),
    "succ of a length": "atom_length(P, N), succ(N, M), " + _ask("M"),
    "compare/3": "compare(O, P, m), " + _ask("O"),
    "a char_code of a count": f"aggregate_all(count, (member(C, {LETTERS}), C @< P), N), "
                              f"K is 0'a + N, char_code(X, K), {_ask('X')}",
    "format of a count": f"aggregate_all(count, (member(C, {LETTERS}), C @< P), N), "
                         f"format(atom(T), 'n=~w', [N]), {_ask('T')}",
    "atomic_list_concat of a count": f"aggregate_all(count, (member(C, {LETTERS}), C @< P), N), "
                                     f"atomic_list_concat([n, N], T), {_ask('T')}",
    "copy_term": "atom_length(P, N), copy_term(f(N), T), " + _ask("T"),
    "=..": "atom_length(P, N), T =.. [f, N], " + _ask("T"),
    "arg/3": "atom_length(P, N), T = f(N), arg(1, T, X), " + _ask("X"),
    "functor/3": "atom_length(P, N), functor(T, f, N), " + _ask("T"),
    "a branch its comparison chose": "( P @< m -> H = first ; H = second ), " + _ask("H"),
    "a branch bound under a rule": "half(P, H), " + _ask("H"),
    "a later branch of a disjunction": "( U == ann, H = x ; P @< m, H = y ; H = z ), " + _ask("H"),
    "ignore": "ignore(( P @< m, H = y )), " + _ask("H"),
    "a rule's clauses chosen by it": "kind(P, H), " + _ask("H"),
    "a rule's head comparing it": "default(P, H), " + _ask("H"),
    "a denial's reason": f"aggregate_all(count, (member(C, {LETTERS}), C @< P), N), "
                         "format(atom(R), 'n=~w', [N]), require(fail, R)",
    "an askable's question": "atom_length(P, N), why(N, _)",
    "a measure from a rule": "len(P, N), " + _ask("N"),
    "a tool's answer for it": "login_ok(U, P, Ok), " + _ask("Ok"),
    "a fact kept for it": "owner(P, Who), " + _ask("Who"),
}
HELPERS = (
    f"below(P, N) :- aggregate_all(count, (member(C, {LETTERS}), C @< P), N).\n"
    "half(P, H) :- ( P @< m -> H = first ; H = second ).\n"
    "len(P, N) :- atom_length(P, N).\n"
    "kind(P, short) :- atom_length(P, N), N < 8.\nkind(P, long) :- atom_length(P, N), N >= 8.\n"
    "default(changeme, yes).\ndefault(P, no) :- P \\== changeme.\n"
)

# the whole argument list read by a secret key, or by a key the loader cannot know
LIST_READS = {
    "member by name": "member(password = P, A)",
    "memberchk by name": "memberchk(password = P, A)",
    "select by name": "select(password = P, A, _)",
    "selectchk by name": "selectchk(pin = P, A, _)",
    "a pair then its parts": "member(E, A), E = (password = P)",
    "nth1": "nth1(2, A, E), E = (_ = P)",
    "nth0": "nth0(1, A, _ = P)",
    "last": "last(A, _ = P)",
    "a key held in a variable": "K = password, member(K = P, A)",
    "keys from a list": "member(K, [note, password]), memberchk(K = P, A)",
    "option_value by a variable key": "member(K, [note, password]), option_value(A, K, '', P)",
    "pairs_values": "pairs_values(A, Vs), member(P, Vs)",
    "append": "append(_, [_ = P|_], A)",
    "the list's text": "format(atom(P), '~w', [A])",
    "the list taken apart": "A = [_ = P|_]",
    "a helper given the list": "value_of(A, password, P)",
    "a helper given a key it does not write": "member(K, [note, password]), value_of(A, K, P)",
}


LIST_HEAD = "guard('x__login', [args(A)],\n      ( "


def _list_guard(read: str) -> str:
    return (f"{LIST_HEAD}{read}, sub_atom(P, 0, 2, _, H), {_ask('H')} )).\n"
            "value_of(A, K, V) :- member(K = V, A).\n")


# what may still be done (each loads as before)
ALLOWED = {
    "a length compared": _guard("atom_length(P, N), N >= 8, " + _ask("U")),
    "arithmetic on a length kept in the proof": _guard("atom_length(P, N), M is N - 8, M >= 0, " + _ask("U")),
    "a count compared": _guard(f"aggregate_all(count, (member(C, {LETTERS}), C == P), N), N =:= 0, "
                               f"{_ask('U')}"),
    "a constant question in a branch": _guard("( atom_length(P, N), N < 8 -> require(fail, 'too short') "
                                              "; true ), " + _ask("U")),
    "a count of something else": _guard(f"aggregate_all(count, member(_, {LETTERS}), N), {_ask('N')}"),
    "a collection of something else": _guard(f"findall(C, (member(C, {LETTERS}), C @< U), L), {_ask('L')}"),
    "a branch on another argument": _guard("( U == ann -> H = a ; H = b ), " + _ask("H")),
    "a branch binding nothing new": _guard("( P @< m -> true ; true ), " + _ask("U")),
    "a measure given the user too": _guard("compare(O, P, U), O \\== (=), " + _ask("U")),
    "a tool given it and the user": _guard("login_ok(U, P, Ok), Ok == true, " + _ask("U")),
    "a checked count under a negation": _guard(
        f"\\+ ( aggregate_all(count, sub_atom(P, _, _, _, a), N), N > 3 ), {_ask('U')}"),
    "another argument of the list": LIST_HEAD + "member(user = U, A), sub_atom(U, 0, 2, _, H), " + _ask("H")
                                    + " )).\n",
    "a helper given the list and a written key": LIST_HEAD + "value_of(A, user, U), sub_atom(U, 0, 2, _, H), "
                                                 + _ask("H") + " )).\n"
                                                 "value_of(A, K, V) :- option_value(A, K, '', V).\n",
    "the user formatted with the list": "guard('x__login', [user = U, args(A)],\n      ( format(atom(T), "
                                        "'~w ~w', [U, A]), T \\== '', " + _ask("U") + " )).\n",
    "how many arguments the list holds": LIST_HEAD + "length(A, N), " + _ask("N") + " )).\n",
    "the list's keys checked under forall": LIST_HEAD + "forall(member(K, [x1, y1]), "
                                            "( option_value(A, K, 0, V), V >= 0 )), " + _ask("a") + " )).\n",
}


def _lines(problems: list[str]) -> set[int]:
    return {int(p.split(":")[1]) for p in problems if MINE in p}


@pytest.mark.parametrize("name", list(DERIVED))
async def test_a_value_computed_from_a_secret_reaching_a_person_is_refused(tmp_path: Path, name: str) -> None:
    text = HEAD + HELPERS + _guard(DERIVED[name])
    first = HEAD_LINES + HELPERS.count("\n") + 1
    lines = _lines(await _problems(tmp_path, text))
    assert lines & {first, first + 1} or (name.endswith("rule") and lines), (name, lines)


@pytest.mark.parametrize("name", list(LIST_READS))
async def test_the_whole_argument_list_read_by_a_secret_or_unknown_key_is_followed(tmp_path: Path,
                                                                                  name: str) -> None:
    problems = await _problems(tmp_path, HEAD + _list_guard(LIST_READS[name]))
    assert _lines(problems) & {HEAD_LINES + 1, HEAD_LINES + 2}, (name, problems)


@pytest.mark.parametrize("name", list(ALLOWED))
async def test_what_may_be_done_with_a_value_computed_from_a_secret_loads(tmp_path: Path, name: str) -> None:
    problems = await _problems(tmp_path, HEAD + ALLOWED[name])
    assert not _lines(problems), (name, problems)


async def test_every_admitted_goal_has_a_row() -> None:
    """A goal the rulebase allow list admits (goal_check.pl: pure builtins, sentinel_rt's exports, the
    rulebase's own constructs and meta-calls) with no row in the taint table would be followed by a default:
    each must be decided on purpose."""
    controls = ("[(_, _), (_ ; _), (_ -> _), (_ *-> _), \\+ _, once(_), ignore(_), forall(_, _), "
                "findall(_, _, _), findall(_, _, _, _), aggregate_all(count, _, _), bagof(_, _, _), "
                "setof(_, _, _), require(_, _), require(_, _, _)]")
    goal = ("findall(N/A, ( ( sentinel_core:pure_builtin(N, A) ; sentinel_core:rulebase_only_builtin(N/A) "
            "; module_property(sentinel_rt, exports(Ex)), member(N/A, Ex) "
            f"; member(G, {controls}), functor(G, N, A) ), "
            "\\+ sentinel_core:secret_flow_kind(N/A, _) ), Missing), format(atom(Shown), '~q', [Missing])")
    rows = await shared_engine().run(lambda p: list(p.query(goal, maxresult=1)))
    assert rows and str(rows[0]["Shown"]) == "[]", rows
