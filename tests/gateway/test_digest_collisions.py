"""A hostile client makes two calls, or two facts, share a digest that binds an answer, and so gets the user's
"yes" to one for the other. Digests cut short collide for anyone who spends the hashes: both sides are the
caller's to write, and no secret goes into them, so a pair found once works against every gateway.

- The argument digest binds a confirmation and an answer round (its sealed state) to one call. Cut to 16 hex
  digits (64 bits) a colliding pair took about 2^32 hashes (minutes on one core, with Pollard's rho): the
  user was shown ``bank__send(account=12, to="2c418b691b24bb57")`` and said yes; the client retried with the
  state, the "yes" and ``to="ca99c149db384439"``, and the state, the confirmation's key and its record all
  matched: the statement went to the address nobody was shown. ``PAIR`` below is such a pair (found with
  ``tests/gateway/digest_pairs.c``).
- A question about a fact is keyed by the fact's digest. Cut to 12 hex digits (48 bits) a colliding pair took
  2^24 hashes (seconds): a guard asking ``statement_ok(A, yes)`` for each mailed account asked two questions
  under one key, the client's form (one field a key) showed only the last, and the one answer was recorded for
  both: an account's statement went out that no question had named.

Each attack runs through the real gateway (real SWI-Prolog, the bank upstream in a subprocess, the mcp client
in the 2026-07-28 era, which answers rounds in ``inputResponses``); what reached the upstream is read from its
log."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.core.decision import _CANONICAL, Ask, Deny, Question, ToolCall, argument_digest
from sentinel_mcp.gateway.ask_rounds import decide_with_answers

from .guard_probe import bank_config, reached

pytestmark = pytest.mark.timeout(180)
APPROVE = ElicitResult(action="accept", content={"approve": True})
YES = ElicitResult(action="accept", content={"answer": "yes"})
# sha256 of their canonical JSON agree in the first 16 hex digits (f94424df5a3f7b09): the old argument digest
PAIR = ({"account": 12, "to": "2c418b691b24bb57"}, {"account": 12, "to": "ca99c149db384439"})
# sha256 of the statement_ok facts' texts agree in their first 12 hex digits (b7f288a08e15)
FACT_PAIR = (254032204364743, 185057185357521)
STATEMENT_RULES = """
askable(statement_ok(A, W), "May the statement of account ~w be mailed?", yes_no, [from([user])]).
guard('bank__statement', [accounts = As], ( is_list(As), forall(member(A, As), statement_ok(A, yes)) )).
"""


async def _asked_only(ctx: Any, params: Any) -> ElicitResult:
    raise AssertionError("a 2026-era call is answered in its retry, never pushed")


def _config(tmp: Path, rules: str = "") -> Any:
    raw = bank_config(tmp)
    bank = tmp / "bank.pl"
    # the rig's own statement guard gives way to the askable one
    rig = bank.read_text().replace("guard('bank__statement'", "rig_guard('bank__statement'")
    bank.write_text(rig + rules)
    return parse_config(raw, base_dir=str(tmp))


def test_the_pair_collides_in_what_the_digest_once_kept() -> None:
    """The precondition of the attack below: a real pair, not a stand-in."""
    a, b = (hashlib.sha256(_CANONICAL.encode(args).encode()).hexdigest() for args in PAIR)
    assert a[:16] == b[:16] and a != b


async def test_a_yes_to_the_call_shown_runs_no_other_call_of_a_colliding_digest(tmp_path: Path) -> None:
    """The call that ran is the call whose question the client was shown and answered, or none ran."""
    shown_args, other = PAIR
    config = _config(tmp_path)
    async with running_gateway(config) as rt, Client(
        rt.front.server, mode="auto", elicitation_callback=_asked_only
    ) as c:
        first = await c.session.call_tool("bank__send", shown_args, allow_input_required=True)
        assert type(first).__name__ == "InputRequiredResult", first
        (question,) = first.input_requests.values()
        assert shown_args["to"] in question.params.message and other["to"] not in question.params.message
        r = await c.session.call_tool(
            "bank__send", other, allow_input_required=True,
            input_responses={k: APPROVE for k in first.input_requests}, request_state=first.request_state,
        )
        assert type(r).__name__ == "InputRequiredResult" or r.is_error, r
        assert reached(tmp_path) == []  # the address nobody was shown got nothing
        # the state is bound to the call it was issued for: that call, answered, runs
        again = await c.session.call_tool("bank__send", shown_args, allow_input_required=True)
        done = await c.session.call_tool(
            "bank__send", shown_args, allow_input_required=True,
            input_responses={k: APPROVE for k in again.input_requests}, request_state=again.request_state,
        )
        assert not done.is_error, done
    assert [row["arguments"]["to"] for row in reached(tmp_path)] == [shown_args["to"]]


def test_the_fact_pair_collides_in_what_a_key_once_kept() -> None:
    """The precondition of the attack below: a real pair, not a stand-in."""
    a, b = (hashlib.sha256(f"statement_ok({n},yes)".encode()).hexdigest() for n in FACT_PAIR)
    assert a[:12] == b[:12] and a != b


async def test_one_answer_never_approves_a_fact_no_question_named(tmp_path: Path) -> None:
    """Every account whose statement went out was named by a question the client was shown and answered."""
    hidden, shown_last = FACT_PAIR
    config = _config(tmp_path, STATEMENT_RULES)
    shown: list[str] = []
    async with running_gateway(config) as rt, Client(
        rt.front.server, mode="auto", elicitation_callback=_asked_only
    ) as c:
        args = {"accounts": [hidden, shown_last]}
        r = await c.session.call_tool("bank__statement", args, allow_input_required=True)
        for _ in range(4):
            if type(r).__name__ != "InputRequiredResult":
                break
            shown += [q.params.message for q in r.input_requests.values()]
            r = await c.session.call_tool(
                "bank__statement", args, allow_input_required=True,
                input_responses={k: YES for k in r.input_requests}, request_state=r.request_state,
            )
    ran = [a for row in reached(tmp_path) for a in row["arguments"]["accounts"]]
    unnamed = [a for a in ran if not any(str(a) in m for m in shown)]
    assert unnamed == [], (unnamed, shown)
    assert sorted(ran) == sorted(FACT_PAIR)  # both were asked about, both answered: the call ran


async def test_two_different_questions_under_one_key_are_denied_unasked() -> None:
    """Whatever makes two keys meet (a digest, a rulebase's own naming), one round never carries both."""
    call = ToolCall(name="bank__statement", server="bank", tool="statement", arguments={"accounts": [1, 2]})
    key = "sentinel.policy.ask.statement_ok.same"

    def question(n: int) -> Question:
        return Question(key=key, message=f"May the statement of account {n} be mailed?",
                        requested_schema={"type": "object"},
                        meta={"kind": "ask", "fact": f"statement_ok({n},yes)"})

    recorded: list[Any] = []

    async def decide() -> Ask:
        return Ask(reason="asks", questions=[question(1), question(2)], unmet=["statement_ok"])

    async def record(q: Question, a: Any) -> None:
        recorded.append(q)

    for answers in ({}, {key: YES}):
        decision = await decide_with_answers(call, answers, timeout=10, decide_once=decide, record=record)
        assert isinstance(decision, Deny) and decision.unmet == ["question_keys"], decision
    assert recorded == []

    async def twice() -> Ask:  # one question asked twice over (two branches needing one fact) is one question
        return Ask(reason="asks", questions=[question(1), question(1)], unmet=["statement_ok"])

    assert isinstance(await decide_with_answers(call, {}, timeout=10, decide_once=twice, record=record), Ask)


def test_the_argument_digest_is_all_of_sha256() -> None:
    """A confirmation, a continuation and an answer round are bound by it: the whole hash, not a cut one."""
    for arguments in ({}, {"account": 12, "to": "x"}, {"nested": {"a": [1, 2.5, None]}}):
        text = _CANONICAL.encode(arguments)
        assert argument_digest(arguments) == hashlib.sha256(text.encode()).hexdigest()
    # no arguments (a tool without parameters: hashed once, not per call) is the digest of the text "{}"
    assert argument_digest(None) == argument_digest({}) == hashlib.sha256(b"{}").hexdigest()
