"""A bound context counts only while its check holds in every spelling of a guard that reads it, also where
the proof runs natively: inside findall/aggregate_all/setof/bagof (their goal runs as Prolog runs it) and in
a rule with a cut (called natively, as prove/2 calls it).

``context_value/2`` called there was the plain read of the stored binding: a guard that found the booking in
focus through ``findall`` or a rule with a cut acted on a binding whose check no longer held (the booking had
gone to another user), while the same guard spelled as a plain goal was denied."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_asyncio

from sentinel_mcp.core.decision import Allow, ToolCall
from sentinel_mcp.policy.policy_service import PolicyService
from tests.policy.policy_rig import make_guard

pytestmark = [pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]
GOALS = {
    "plain": "context_value(focus, B)",
    "findall": "findall(F, context_value(focus, F), [B])",
    "findall4": "findall(F, context_value(focus, F), [B], [])",
    "count": "aggregate_all(count, context_value(focus, B), 1)",
    "bag": "aggregate_all(bag(F), context_value(focus, F), [B])",
    "setof": "setof(F, context_value(focus, F), [B])",
    "bagof": "bagof(F, context_value(focus, F), [B])",
    "cut_rule": "focus_cut(B)",
    "cut_rule_nested": "outer_cut(B)",
    "findall_rule": "findall(F, in_focus(F), [B])",
}
RULES = "\n".join(
    ["ok_focus(good).", "context(focus, V, ok_focus(V)).",
     "focus_cut(B) :- context_value(focus, B), !.", "outer_cut(B) :- in_focus(B), !.",
     "in_focus(B) :- context_value(focus, B)."]
    + [f"guard('t__{name}', [v = B], {goal})." for name, goal in GOALS.items()]
) + "\n"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def guard(tmp_path_factory: pytest.TempPathFactory) -> Any:
    d = tmp_path_factory.mktemp("native_focus")
    (d / "focus.pl").write_text(RULES)
    g = await make_guard(None, d / "facts.db", files=[d / "focus.pl"])
    assert g.load_error is None, g.load_error
    for session, value in (("held", "good"), ("stale", "gone")):
        await g.knowledge.ensure(session, g.rulebases.current)
        # "gone": a binding whose check does not hold now (proved once; the world or the policy moved since)
        await g.knowledge.bind_context(session, "focus", value)
    yield g
    await g.close()


def _call(name: str, session: str, value: str) -> ToolCall:
    return ToolCall(name=f"t__{name}", server="t", tool=name, arguments={"v": value}, session_id=session)


@pytest.mark.parametrize("name", sorted(GOALS))
async def test_a_stale_focus_allows_nothing_in_any_spelling(guard: Any, name: str) -> None:
    decision = await guard.decide(_call(name, "stale", "gone"))
    assert not isinstance(decision, Allow), f"{name}: a stale focus was acted on: {decision}"


@pytest.mark.parametrize("name", sorted(GOALS))
async def test_a_focus_whose_check_holds_allows_in_every_spelling(guard: Any, name: str) -> None:
    decision = await guard.decide(_call(name, "held", "good"))
    assert isinstance(decision, Allow), f"{name}: {decision}"


QUERIES = {  # goal -> (the stale focus's answer, the held focus's answer), as the bindings' text
    "findall(F, context_value(focus, F), L)": ("[]", "['good']"),
    "aggregate_all(count, context_value(focus, _), L)": ("0", "1"),
    "focus_cut(L)": (None, "good"),
    "setof(F, context_value(focus, F), L)": (None, "['good']"),
}


@pytest.mark.parametrize("goal", sorted(QUERIES))
async def test_a_query_sees_no_stale_focus_inside_a_native_call(guard: Any, goal: str) -> None:
    for session, want in zip(("stale", "held"), QUERIES[goal]):
        out = await PolicyService(guard).query(session, goal)
        got = str(out.solutions[0]["bindings"]["L"]) if out.status == "proved" else None
        assert got == want, (session, out)
