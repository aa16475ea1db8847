"""A client's symbolic query reads a bound context only while the context's check holds, as a guard does.

``sentinel_query`` lets a goal name a context by its name (``named(focus, X)``): the name is read as the
bound value. That shortcut took the stored binding as proved once, so a focus whose check no longer holds
(the entity went to another user, a stricter policy) still answered "proved" with its value, while the same
query spelled ``context_value(focus, X)`` (and every guard) found no value. The check is proved again, within
the query's own limits, in every spelling."""

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
context(free).
named(V, V).
"""
# the spellings of a goal that reads the context's value (by name, nested, in a list, compared)
BY_NAME = ["named(focus, X)", "X = focus", "named([focus], [X])", "(named(f(focus), f(X)), X \\== nothing)",
           "(focus = X, atom(X))"]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def guard(tmp_path_factory: pytest.TempPathFactory) -> Any:
    d = tmp_path_factory.mktemp("stale_focus")
    (d / "focus.pl").write_text(RULES)
    g = await make_guard(None, d / "facts.db", files=[d / "focus.pl"])
    await g.knowledge.ensure("held", g.rulebases.current)
    await g.knowledge.bind_context("held", "focus", "good")
    await g.knowledge.bind_context("held", "free", "any")
    # a binding whose check does not hold now (stored as proved once; the world or the policy moved since)
    await g.knowledge.ensure("stale", g.rulebases.current)
    await g.knowledge.bind_context("stale", "focus", "gone")
    yield g
    await g.close()


@pytest.mark.parametrize("goal", [*BY_NAME, "context_value(focus, X)"])
async def test_a_stale_focus_gives_a_query_no_value(guard: Any, goal: str) -> None:
    out = await PolicyService(guard).query("stale", goal)
    assert out.status == "failed", out
    assert "gone" not in str(out.solutions), out


@pytest.mark.parametrize("goal", [*BY_NAME, "context_value(focus, X)"])
async def test_a_focus_whose_check_holds_reads_as_its_value(guard: Any, goal: str) -> None:
    out = await PolicyService(guard).query("held", goal)
    assert out.status == "proved", out
    assert out.solutions and out.solutions[0]["bindings"]["X"] == "good", out


async def test_a_context_without_a_check_and_an_unbound_name_read_as_before(guard: Any) -> None:
    out = await PolicyService(guard).query("held", "named(free, X)")
    assert out.status == "proved" and out.solutions[0]["bindings"]["X"] == "any", out
    # a context name that is not bound stays the name itself
    out = await PolicyService(guard).query("stale", "named(free, X)")
    assert out.status == "proved" and out.solutions[0]["bindings"]["X"] == "free", out
