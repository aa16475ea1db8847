"""An argument a tool declares secret only in its schema (``writeOnly``, ``format: password``, its sensitive
list: the call's ``secret_arguments``) is held to the flow check of a secret: while a guard or an effect bound
to the tool makes something of it (a piece, a case change, a hash) or puts it whole into a question, a
denial's reason or a fact, every call of the tool is denied, the reason naming the rule's file and line
(``policy/schema_secret_flows.py``). Before, the loader followed only arguments *named* secret, so ``word``
declared ``writeOnly`` had its first letters asked of the person, kept in the proof, or written into a fact.
The schema comes after the rulebase (at listing, and again at a re-listing): the same guard is walked again
when what the schema declares secret changes. Real SWI-Prolog, a real guard."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.core.decision import Allow, Ask, Deny, ToolCall
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.schema_secret_flows import LEAKING_GUARD

pytestmark = pytest.mark.timeout(120)

HEAD = (
    "binding(check_ok(U, P, Ok), tool('x__check', [user = U, word = P]), extract([Ok = '/ok']), []).\n"
    "askable(why(U, W), \"Why sign ~w in?\", text, []).\n"
    "fact(hint/2).\n"
)
# what a rule may make of the argument ``word`` (secret by its schema only), each a tool of its own
LEAKS = {
    "sub_atom": "sub_atom(P, 0, 2, _, H), confirmed('Starts with ~w?', [H])",
    "the whole value": "confirmed('Sign in with ~w?', [P])",
    "upcase": "upcase_atom(P, H), confirmed('Sign in with ~w?', [H])",
    "chars": "atom_chars(P, Cs), confirmed('~w?', [Cs])",
    "format": "format(atom(A), '~a', [P]), confirmed('~w?', [A])",
    "a digit sum": "atom_number(P, N), S is N mod 10, confirmed('Last digit ~w?', [S])",
    "an askable": "sub_atom(P, 0, 2, _, H), why(H, _)",
    "a denial's reason": "atom_concat('bad ', P, R), require(P == x, R)",
    "only in the proof": "upcase_atom(P, H), H \\== P, confirmed('Sign ~w in?', [U])",
    "an alias": "Q = P, sub_atom(Q, 0, 1, _, H), confirmed('~w?', [H])",
    "a helper": "first(P, F), confirmed('~w?', [F])",
}
SAFE = "P \\== '', atom_length(P, N), N >= 4, check_ok(U, P, Ok), Ok == true, confirmed('Sign ~w in?', [U])"
# the same through the whole argument list (``args(A)``): what the list holds of it is the argument
ARGS_LEAKS = {
    "option_value of it": "option_value(A, word, '', P), sub_atom(P, 0, 2, _, H), confirmed('~w?', [H])",
    "a member of the list": "member(word = P, A), sub_atom(P, 0, 2, _, H), confirmed('~w?', [H])",
    "the list shown": "confirmed('Call with ~w?', [A])",
}
# (a piece of the list's text, or a value read by a key held in a variable, is refused at load now, whatever
# the schema: tests/policy/test_secret_derived_flows.py)
ARGS_SAFE = "option_value(A, user, '', U), confirmed('Sign ~w in?', [U])"


def _rules() -> str:
    out = [HEAD, "first(P, F) :- sub_atom(P, 0, 1, _, F).\n"]
    for n, body in enumerate(LEAKS.values()):
        out.append(f"guard('x__t{n}', [user = U, word = P],\n      ( {body} )).\n")
    out.append(f"guard('x__safe', [user = U, word = P], ( {SAFE} )).\n")
    out.append("effect('x__remember', [user = U, word = P], [establish(hint(U, P))]).\n")
    out.append("guard('y__*', [user = U, word = P], ( sub_atom(P, 0, 2, _, H), confirmed('~w?', [H]) )).\n")
    for n, body in enumerate(ARGS_LEAKS.values()):
        out.append(f"guard('z__t{n}', [args(A)], ( {body} )).\n")
    out.append(f"guard('z__safe', [args(A)], ( {ARGS_SAFE} )).\n")
    return "".join(out)


def _call(identity: str, secret: frozenset[str], session: str) -> ToolCall:
    server, _, tool = identity.partition("__")
    return ToolCall(name=f"exposed_{tool}", server=server, tool=tool, session_id=session,
                    arguments={"user": "ann", "word": "Hunter2-canary-7731"}, secret_arguments=secret)


@pytest.fixture
async def guard(tmp_path: Path):  # noqa: ANN201
    rb = tmp_path / "schema.pl"
    rb.write_text(_rules())
    g = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await g.start(watch=False)
    try:
        yield g
    finally:
        await g.close()


def _refused(decision: object, line: int) -> None:
    assert isinstance(decision, Deny) and decision.unmet == [LEAKING_GUARD], decision
    assert f"schema.pl:{line}:" in decision.reason and "word" in decision.reason, decision.reason
    assert "Hunter2" not in decision.model_dump_json(), decision


@pytest.mark.parametrize(("n", "name"), list(enumerate(LEAKS)))
async def test_a_guard_leaking_an_argument_its_schema_declares_secret_denies_the_tool(
        guard: PolicyGuard, n: int, name: str) -> None:
    line = HEAD.count("\n") + 2 + 2 * n  # the guard's first line
    for spelling in ({"word"}, {"word", "user"}, {"word", "note"}):  # with other secrets or none
        _refused(await guard.decide(_call(f"x__t{n}", frozenset(spelling), f"s-{n}")), line)


async def test_an_effect_writing_it_into_a_fact_and_a_prefix_guard_deny(guard: PolicyGuard) -> None:
    effect_line = HEAD.count("\n") + 2 + 2 * len(LEAKS) + 1
    _refused(await guard.decide(_call("x__remember", frozenset({"word"}), "s-e")), effect_line)
    for tool in ("y__login", "y__other"):
        _refused(await guard.decide(_call(tool, frozenset({"word"}), f"s-{tool}")), effect_line + 1)


async def test_what_may_be_done_with_it_is_decided_as_before(guard: PolicyGuard) -> None:
    decision = await guard.decide(_call("x__safe", frozenset({"word"}), "s-safe"))
    assert not (isinstance(decision, Deny) and decision.unmet == [LEAKING_GUARD]), decision


async def test_a_relisting_that_declares_it_secret_is_walked_again(guard: PolicyGuard) -> None:
    # listed first without a secret: the guard asks (the argument is no secret of this tool's schema)
    first = await guard.decide(_call("x__t0", frozenset(), "s-r"))
    assert isinstance(first, (Ask, Allow)), first
    # listed again with ``word`` writeOnly: the same rule now leaks, and is refused
    _refused(await guard.decide(_call("x__t0", frozenset({"word"}), "s-r")), HEAD.count("\n") + 2)
    # and again without: as before
    again = await guard.decide(_call("x__t0", frozenset(), "s-r"))
    assert isinstance(again, (Ask, Allow)), again


@pytest.mark.parametrize(("n", "name"), list(enumerate(ARGS_LEAKS)))
async def test_a_guard_leaking_it_through_the_whole_argument_list_denies_the_tool(
        guard: PolicyGuard, n: int, name: str) -> None:
    line = HEAD.count("\n") + 2 + 2 * len(LEAKS) + 3 + n  # after the safe guard, the effect, y__*
    _refused(await guard.decide(_call(f"z__t{n}", frozenset({"word"}), f"s-z{n}")), line)


async def test_a_guard_reading_another_argument_of_the_list_is_decided_as_before(guard: PolicyGuard) -> None:
    decision = await guard.decide(_call("z__safe", frozenset({"word"}), "s-zsafe"))
    assert isinstance(decision, Ask) and "Sign ann in?" in decision.reason, decision
