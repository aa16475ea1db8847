"""A bound context names its value only while its check holds, in ``sentinel_answer`` and ``sentinel_facts``
as in a guard or a query (``bound_contexts.pl``).

``sentinel_answer`` resolved a context named among its inputs to the stored binding without proving the check
again, and ``sentinel_facts`` listed such a binding as any other. The answer gave the agent no power a literal
input does not (an agent's answer about any value is its own word; a guard about the entity proves the check
again), but the name meant one thing there and another everywhere else: the agent answered "about the booking
in focus" for a booking that is no longer the user's, and read it as in focus."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_asyncio

from sentinel_mcp.policy.policy_service import PolicyService
from sentinel_mcp.policy.questions import AnswerRefused
from tests.policy.policy_rig import make_guard

pytestmark = [pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]
RULES = """
ok_focus(good).
context(focus, V, ok_focus(V)).
context(free).
askable(note(X, W), "A note about ~w?", text, [from([user, agent])]).
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def guard(tmp_path_factory: pytest.TempPathFactory) -> Any:
    d = tmp_path_factory.mktemp("answer_stale_focus")
    (d / "focus.pl").write_text(RULES)
    g = await make_guard(None, d / "facts.db", files=[d / "focus.pl"])
    for session, value in (("held", "good"), ("stale", "gone")):
        await g.knowledge.ensure(session, g.rulebases.current)
        await g.knowledge.bind_context(session, "focus", value)  # "gone": stored as proved once
        await g.knowledge.bind_context(session, "free", "any")
    yield g
    await g.close()


async def test_an_answer_through_a_stale_focus_is_refused(guard: Any) -> None:
    with pytest.raises(AnswerRefused, match="check does not hold"):
        await PolicyService(guard).answer("stale", "note", ["focus"], "hi")
    assert not [f for f in await guard.store.valid("stale") if f.predicate == "note"]
    # a context without a check names its value, as before
    assert await PolicyService(guard).answer("stale", "note", ["free"], "hi") == "note(any,hi)"


async def test_an_answer_through_a_focus_whose_check_holds_names_its_value(guard: Any) -> None:
    assert await PolicyService(guard).answer("held", "note", ["focus"], "hi") == "note(good,hi)"


async def test_the_facts_summary_marks_a_stale_focus(guard: Any) -> None:
    stale = await PolicyService(guard).summary("stale")
    [marked] = [line for line in stale.splitlines() if "check does not hold now" in line]
    assert marked.endswith(": focus"), stale  # the context without a check is not marked
    held = await PolicyService(guard).summary("held")
    assert "check does not hold" not in held, held
