"""A refused query names no bound context's value.

``sentinel_query`` reads an atom that names a context as the context's bound value, and gives it that value
only while the context's check holds (test_query_stale_focus.py). The allow list was run on the goal after
that reading, and its refusal wrote the goal back: a query refused for its shape (module-qualified, the
name standing as a goal, a meta-call) told the value of a binding whose check does not hold, the very value
every other spelling withholds. A refusal now speaks of the client's own text, never of a value read
for it."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_asyncio

from sentinel_mcp.policy.policy_service import PolicyService
from tests.policy.policy_rig import make_guard

pytestmark = [pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]
RULES = """
ok_focus(good).
context(focus, V, ok_focus(V)).
named(V, V).
context(spot, V, ok_focus(V)).
spot.
"""
STALE = "gone_value_7"
# queries refused for their shape, each with the context's name where the refusal text would show it
REFUSED = [
    "sentinel_core:valid_fact('$context'(focus, X), _)",
    "lists:member(focus, [X])",
    "focus",
    "(true, focus)",
    "\\+ focus",
    "findall(X, (named(focus, X), focus), _)",
    "named(focus, X), call(focus)",
    "X = [focus], forall(member(Y, X), Y)",
    "(focus ; named(focus, _))",
    "m:focus",
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def guard(tmp_path_factory: pytest.TempPathFactory) -> Any:
    d = tmp_path_factory.mktemp("refusal_value")
    (d / "focus.pl").write_text(RULES)
    g = await make_guard(None, d / "facts.db", files=[d / "focus.pl"])
    await g.knowledge.ensure("stale", g.rulebases.current)
    await g.knowledge.bind_context("stale", "focus", STALE)  # its check does not hold for this value
    await g.knowledge.bind_context("stale", "spot", STALE)
    await g.knowledge.ensure("held", g.rulebases.current)
    await g.knowledge.bind_context("held", "focus", "good")
    yield g
    await g.close()


@pytest.mark.parametrize("goal", REFUSED)
async def test_a_refused_query_names_no_stale_value(guard: Any, goal: str) -> None:
    out = await PolicyService(guard).query("stale", goal)
    assert out.status in ("refused", "error"), out
    assert STALE not in str(out), out


async def test_a_value_that_cannot_stand_as_a_goal_is_refused_without_its_name(guard: Any) -> None:
    # the name is a goal only once read as its value: refused, and the refusal does not say the value
    out = await PolicyService(guard).query("held", "focus")
    assert out.status == "refused", out
    assert "good" not in (out.error or ""), out


async def test_queries_that_read_the_value_as_a_term_still_answer(guard: Any) -> None:
    out = await PolicyService(guard).query("held", "named(focus, X)")
    assert out.status == "proved" and out.solutions[0]["bindings"]["X"] == "good", out
    out = await PolicyService(guard).query("stale", "named(focus, X)")
    assert out.status == "failed" and STALE not in str(out), out


@pytest.mark.parametrize("goal", ["spot", "(true, spot)", "findall(x, spot, _)", "\\+ spot"])
async def test_a_name_that_is_also_a_predicate_runs_no_value_as_a_goal(guard: Any, goal: str) -> None:
    # spot/0 is the rulebase's, so the client's text passes; read as its value it would call the value
    out = await PolicyService(guard).query("stale", goal)
    assert out.status == "refused", out
    assert STALE not in str(out), out
