"""An answer typed as text that spells ``true`` is the text, never the boolean a rule tests for; a choice's
option is the rulebase's own term, offered as its JSON value (the atom true as the boolean: the text "true"
is no answer to it). Real SWI-Prolog and fact store, through the guard's
own asking and recording of answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.policy.policy_rig import make_guard
from tests.policy.test_answer_once import asked, call

from sentinel_mcp.core.decision import Allow, Answer, Deny
from sentinel_mcp.policy.questions import AnswerRefused

pytestmark = pytest.mark.timeout(120)

RULES = """
askable(note(A, N), "A note for ~w?", text, [from([user, agent])]).
askable(mode(X, M), "Mode of ~w?", choice([true - "On", false - "Off"]), [from([user, agent])]).
guard('shop__pay', [account = A], ( note(A, N), require(N == true, 'only a note that is the boolean') )).
guard('shop__drop', [item = X], ( mode(X, M), require(M == true, 'only when on') )).
"""


@pytest.mark.parametrize("provenance", ["user", "agent"])
async def test_a_text_answer_true_is_no_boolean_and_a_choice_is_its_option(tmp_path: Path,
                                                                            provenance: str) -> None:
    pl = tmp_path / "shop.pl"
    pl.write_text(RULES)
    guard = await make_guard(None, tmp_path / "facts.db", files=[pl], seeds={})
    try:
        pay = call("pay", {"account": "A1"})
        q = await asked(guard, pay)
        await guard.record_answer(pay, q, Answer(action="accept", content={"answer": "true"},
                                                 provenance=provenance))  # type: ignore[arg-type]
        assert isinstance(await guard.decide(pay), Deny)
        drop = call("drop", {"item": "x"})
        q = await asked(guard, drop)
        # the choice true is offered as the boolean (questions.py): the text "true" is no answer to it
        assert [o["const"] for o in q.requested_schema["properties"]["answer"]["oneOf"]] == [True, False]
        with pytest.raises(AnswerRefused):
            await guard.record_answer(drop, q, Answer(action="accept", content={"answer": "true"},
                                                      provenance=provenance))  # type: ignore[arg-type]
        await guard.record_answer(drop, q, Answer(action="accept", content={"answer": True},
                                                  provenance=provenance))  # type: ignore[arg-type]
        assert isinstance(await guard.decide(drop), Allow)
        stored = {f.predicate: f.fact for f in await guard.store.valid("s1")}
        assert stored["note"] == "note('A1',\"true\")" and stored["mode"] == "mode(x,true)", stored
    finally:
        await guard.close()
