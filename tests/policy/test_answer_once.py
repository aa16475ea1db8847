"""A question is answered once while its answer holds: a second, different answer (two calls that asked it at
the same time, or a stale form) is refused, so one conversation never holds two identities. Real SWI-Prolog
and fact store; the race over the wire, both eras, is in /work/redteam/facts/t6*.py's kind of script."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from tests.policy.policy_rig import make_guard

from sentinel_mcp.core.decision import Allow, Answer, Ask, Deny, ToolCall
from sentinel_mcp.policy.questions import AnswerRefused

pytestmark = pytest.mark.timeout(120)

RULEBASE = """
askable(signed_in(U), "Who are you?", text, [from([user])]).
askable(reason(X, W), "Why ~w?", text, [from([user])]).
guard('shop__close', [account = A], ( signed_in(U), U == A )).
guard('shop__drop', [item = X], ( signed_in(_), reason(X, _) )).
"""


def call(tool: str, args: dict[str, Any]) -> ToolCall:
    return ToolCall(name=f"shop__{tool}", server="shop", tool=tool, arguments=args, session_id="s1",
                    principal="owner", destructive=True)


async def asked(guard: Any, c: ToolCall) -> Any:
    d = await guard.decide(c)
    assert isinstance(d, Ask), d
    return d.questions[0]


def said(value: str) -> Answer:
    return Answer(action="accept", content={"answer": value}, provenance="user")


async def guard_of(tmp: Path) -> Any:
    pl = tmp / "shop.pl"
    pl.write_text(RULEBASE)
    return await make_guard(None, tmp / "facts.db", files=[pl], seeds={})


async def test_two_open_questions_answered_differently_keep_the_first(tmp_path: Path) -> None:
    guard = await guard_of(tmp_path)
    try:
        a, b = call("close", {"account": "alice"}), call("close", {"account": "bob"})
        qa, qb = await asked(guard, a), await asked(guard, b)  # both open at once: neither answered yet
        await guard.record_answer(a, qa, said("alice"))
        with pytest.raises(AnswerRefused, match="already answered"):
            await guard.record_answer(b, qb, said("bob"))
        await guard.record_answer(b, qb, said("alice"))  # the same answer again changes nothing
        assert isinstance(await guard.decide(a), Allow)
        assert isinstance(await guard.decide(b), Deny)  # decided on the one identity held
    finally:
        await guard.close()


async def test_answers_racing_each_other_store_one(tmp_path: Path) -> None:
    guard = await guard_of(tmp_path)
    try:
        calls = [call("close", {"account": f"user{i}"}) for i in range(6)]
        questions = [await asked(guard, c) for c in calls]
        results = await asyncio.gather(
            *(guard.record_answer(c, q, said(f"user{i}")) for i, (c, q) in enumerate(zip(calls, questions))),
            return_exceptions=True,
        )
        assert sum(r is None for r in results) == 1, results
        assert all(isinstance(r, AnswerRefused) for r in results if r is not None)
        allowed = [isinstance(await guard.decide(c), Allow) for c in calls]
        assert sum(allowed) == 1, allowed
    finally:
        await guard.close()


async def test_a_question_with_inputs_is_held_per_input(tmp_path: Path) -> None:
    guard = await guard_of(tmp_path)
    try:
        first = call("drop", {"item": "lamp"})
        await guard.record_answer(first, await asked(guard, first), said("me"))
        q1 = await asked(guard, first)
        q2 = await asked(guard, first)
        await guard.record_answer(first, q1, said("broken"))
        with pytest.raises(AnswerRefused):
            await guard.record_answer(first, q2, said("too big"))
        other = call("drop", {"item": "chair"})  # another input: its own question
        await guard.record_answer(other, await asked(guard, other), said("too big"))
        assert isinstance(await guard.decide(first), Allow) and isinstance(await guard.decide(other), Allow)
    finally:
        await guard.close()


YES_NO = """
askable(really_wipe(X), "Really wipe ~w?", yes_no, [from([user, agent])]).
guard('shop__wipe', [item = X], really_wipe(X)).
"""


async def test_a_no_is_not_turned_into_a_yes_by_a_second_answer(tmp_path: Path) -> None:
    """A yes/no question was not held to its first answer: after the user's "no", the agent's "yes" (an
    askable the agent may answer too) was stored beside it, and a yes wins over a no, so the call the user
    refused went through. A second, different answer to a yes/no question is refused as any other's."""
    from sentinel_mcp.policy.policy_service import PolicyService

    pl = tmp_path / "wipe.pl"
    pl.write_text(YES_NO)
    guard = await make_guard(None, tmp_path / "facts.db", files=[pl], seeds={})
    try:
        wipe = call("wipe", {"item": "disk"})
        await guard.record_answer(wipe, await asked(guard, wipe), said("no"))
        assert isinstance(await guard.decide(wipe), Deny)
        with pytest.raises(AnswerRefused, match="already answered"):
            await PolicyService(guard).answer("s1", "really_wipe", ["disk"], "yes")
        assert isinstance(await guard.decide(wipe), Deny)
        await PolicyService(guard).answer("s1", "really_wipe", ["disk"], "no")  # the same answer: nothing new
        # another input is its own question; the agent's yes there does not stand against the user's later
        # no: the user's word replaces the agent's (test_user_answer_wins.py)
        other = call("wipe", {"item": "tape"})
        q = await asked(guard, other)  # the user's form is open
        await PolicyService(guard).answer("s1", "really_wipe", ["tape"], "yes")
        await guard.record_answer(other, q, said("no"))
        assert isinstance(await guard.decide(other), Deny)
        with pytest.raises(AnswerRefused, match="already answered"):
            await PolicyService(guard).answer("s1", "really_wipe", ["tape"], "yes")
    finally:
        await guard.close()
