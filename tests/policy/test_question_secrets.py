"""A question never shows a secret argument's value, and never hides a word for it either.

A rulebase's question text is finished before Sentinel sees it, so a secret's value found in it cannot be told
from the words around it: masking it (as was done) let the caller choose what the person does not see, by
sending a word of the question as the secret ("not", the amount, the payee). So a question whose text spells a
secret argument's value (as it is, quoted, JSON-escaped, glued to other words) is not asked: the call is
denied, naming the argument, never the value (``questions.secrets_spelled``). The same holds for the default
guard's confirmation, whose own slot of the secret is masked by position (``default_guard.describe_call``).
The rulebases here name the arguments plainly (``word``, ``digits``) and the tool declares them secret (as a
schema's ``writeOnly`` does): an argument *named* secret is followed at load already (test_secret_flows.py).
Real SWI-Prolog, a real guard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentinel_mcp.config import PolicySettings
from sentinel_mcp.core.decision import Ask, Deny, ToolCall
from sentinel_mcp.policy.default_guard import DefaultGuard
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.schema_secret_flows import LEAKING_GUARD

pytestmark = pytest.mark.timeout(120)

SECRET = "Hunter2-canary-7731"
RULES = """
guard('t__plain', [word = P], confirmed('Set the password to ~w?', [P])).
guard('t__glued', [word = P], confirmed('Set the password to xx~wyy?', [P])).
guard('t__quoted', [word = P], confirmed('Set the password to ~q?', [P])).
guard('t__whole', [word = P, user = U], confirmed('Change ~w with ~w?', [U, P])).
guard('t__twice', [word = P], confirmed('~w? Really ~w?', [P, P])).
askable(why_change(P, W), "Why change the password to ~w?", text, []).
guard('t__ask', [word = P], why_change(P, _)).
guard('t__pay', [digits = _, amount = A, to = T],
      confirmed('Pay ~w dollars to ~w? This is not reversible.', [A, T])).
askable(pay_reason(A, T, W), "Why pay ~w dollars to ~w? It cannot be undone.", text, []).
guard('t__pay_ask', [digits = _, amount = A, to = T], pay_reason(A, T, _)).
"""
TOOLS = ["t__plain", "t__glued", "t__quoted", "t__whole", "t__twice", "t__ask"]
# what a caller sends as the PIN to hide a word of the question the person approves: the rulebase's own
# words, the amount, the payee (whole or a part of it), in any case the question writes it
HIDING = [("t__pay", pin) for pin in ("not", "reversible", "Pay", "dollars", "1000000", "mallory",
                                     "mallory-ltd", "This is", "ltd", "is not")] + \
         [("t__pay_ask", pin) for pin in ("cannot", "undone", "Why", "pay", "1000000", "mallory-ltd", "It")]


def secret_call(name: str, arguments: dict, session: str, secret: str = "word") -> ToolCall:
    server, _, tool = name.partition("__")
    return ToolCall(name=name, server=server, tool=tool, arguments=arguments, session_id=session,
                    secret_arguments=frozenset({secret}))


def asked_nothing(decision: object, secret: str, name: str, *, common_word: bool = False,
                  unmet: str = "question_spells_secret") -> None:
    """Denied, naming the argument; the value (unless a common word, which the reason may hold) in no text
    of the decision."""
    assert isinstance(decision, Deny), decision
    assert decision.unmet == [unmet], decision
    assert name in decision.reason, decision.reason
    dumped = decision.model_dump_json()
    if common_word:
        return
    for piece in (secret, json.dumps(secret)[1:-1]):
        assert piece not in dumped, (piece, dumped)


@pytest.fixture
async def guard(tmp_path: Path):  # noqa: ANN201
    rb = tmp_path / "secrets.pl"
    rb.write_text(RULES)
    g = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await g.start(watch=False)
    try:
        yield g
    finally:
        await g.close()


@pytest.mark.parametrize("password", [SECRET, "a'b\\c\"d-secret-canary"])
async def test_a_question_a_rulebase_writes_quoting_a_secret_argument_is_not_asked(guard: PolicyGuard,
                                                                                  password: str) -> None:
    # a rule that puts the argument its schema declares secret into a question is refused before it runs
    # (schema_secret_flows.py), whatever the value: the spelled value is never asked either way
    for tool in TOOLS:
        decision = await guard.decide(secret_call(tool, {"word": password, "user": "ann"}, f"s-{tool}"))
        asked_nothing(decision, password, "word", unmet=LEAKING_GUARD)


@pytest.mark.parametrize(("tool", "pin"), HIDING)
async def test_a_secret_chosen_to_hide_a_word_of_the_question_is_refused(guard: PolicyGuard, tool: str,
                                                                         pin: str) -> None:
    arguments = {"digits": pin, "amount": 1000000, "to": "mallory-ltd"}
    decision = await guard.decide(secret_call(tool, arguments, f"s-{tool}-{pin}", "digits"))
    asked_nothing(decision, pin, "digits", common_word=True)


@pytest.mark.parametrize("tool", ["t__pay", "t__pay_ask"])
async def test_a_secret_the_question_does_not_spell_leaves_it_whole(guard: PolicyGuard, tool: str) -> None:
    arguments = {"digits": "4417-zq", "amount": 1000000, "to": "mallory-ltd"}
    decision = await guard.decide(secret_call(tool, arguments, f"s-{tool}-ok", "digits"))
    assert isinstance(decision, Ask), decision
    shown = " ".join(q.message for q in decision.questions)
    assert "1000000 dollars to mallory-ltd" in shown and "redacted" not in shown, shown


@pytest.mark.parametrize("pin", ["ann", "Ann", "ann-the-user", "1000000", "destructive", "transfer"])
async def test_the_default_guards_confirmation_hides_no_word_for_a_secret(pin: str) -> None:
    arguments = {"pin": pin, "user": "ann-the-user", "amount": 1000000}
    call = ToolCall(name="bank__transfer", server="bank", tool="transfer", arguments=arguments,
                    session_id="s", secret_arguments=frozenset({"pin"}), destructive=True)
    decision = await DefaultGuard(PolicySettings()).decide(call)
    if pin in ("Ann",):  # the question holds no "Ann": nothing hidden, the slot masked by position
        assert isinstance(decision, Ask), decision
        shown = decision.questions[0].message
        assert "Ann" not in shown and "redacted 3 chars" in shown, shown
        return
    asked_nothing(decision, pin, "pin", common_word=True)
