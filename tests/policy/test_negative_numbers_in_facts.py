"""A negative number inside an object is written so the engine reads it back: ``json([floor= -1])``.

Sentinel writes the facts it makes itself (a config seed, an answer whose inputs come from a call's object
argument, a context's value) as Prolog text (``prolog_text.term_text``). Glued to the ``=`` of its member,
``'floor'=-1`` is one symbol token ``=-`` to the reader: a syntax error. A config seed holding such an object
made every session fail to load, so every decision of every conversation was a guard error (a deny with a
reference to the log); an answer about such an argument could not be recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.core.decision import Ask, Deny
from sentinel_mcp.policy.engine import PrologEngine
from sentinel_mcp.policy.fact_store import FactStore
from sentinel_mcp.policy.knowledge import Knowledge
from sentinel_mcp.policy.rulebase import load_rulebase
from tests.policy.policy_rig import rig

pytestmark = pytest.mark.timeout(60)

# every place a number can stand in an object's member: alone, a float, in a list, nested, an exponent
VALUES: list[Any] = [
    {"floor": -1},
    {"floor": -1.5},
    {"floor": -1e-05},
    {"floors": [-1, {"deep": -2}]},
    {"a": {"b": -3}, "c": 4},
    [{"x": -1}],
]


@pytest.mark.parametrize("value", VALUES)
async def test_a_fact_holding_a_negative_number_in_an_object_is_read_back_as_given(
    tmp_path: Path, value: Any
) -> None:
    rules = tmp_path / "t.pl"
    rules.write_text("context(doc).\nguard('t__go', [], true).\n")
    engine = PrologEngine()
    engine.start()
    rb = await load_rulebase(engine, [rules])
    store = await FactStore(tmp_path / "facts.db").open()
    try:
        knowledge = Knowledge(store, engine, "neg", {"limits": value})
        await knowledge.ensure("s1", rb)  # the seed, written into the session
        fact = await knowledge.new_fact("s1", "answered", ["d", value], "user")
        assert fact.args == ["d", value]
        await knowledge.add([fact])
        await knowledge.bind_context("s1", "doc", value)
        stored = {f.predicate: f.args for f in await store.valid("s1")}
        assert stored["answered"] == ["d", value]
    finally:
        await store.close()


async def test_a_config_seed_holding_a_negative_number_leaves_decisions_working(tmp_path: Path) -> None:
    """The seed is the fact it says, and a guard decides as it does without it (asks its question)."""
    seeds = {"current_user": "u_123", "today": "2025-01-15", "limits": {"floor": -1}}
    async with rig(tmp_path / "f.db", seeds=seeds) as r:
        call = r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"})
        d = await r.guard.decide(call)
        assert not (isinstance(d, Deny) and "internal error" in d.reason), d.reason
        assert isinstance(d, Ask), d
        mod = r.guard.knowledge.module("s1")
        await r.guard.engine.goal(f"sentinel_core:stored_fact({mod}, limits(json(L)), _, seed), "
                                  "memberchk(floor = F, L), F == -1")
