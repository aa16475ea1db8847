"""A text spelling ``true``, ``false`` or ``null`` and the JSON literal stay apart in every fact Sentinel
writes itself (a text answer, a context bound to a text, a config seed, an agent's fact), in the session's
mirror, and in the store they are read back from after a restart: the text is a string (``flag("true")``),
the literal the atom (``flag(true)``). As atoms they were one term, and a guard ``V == true`` took a person's
or agent's text "true" (or a config's ``"true"``) for the boolean."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.policy.engine import PrologEngine
from sentinel_mcp.policy.engine_thread import EngineError
from sentinel_mcp.policy.fact_store import FactStore
from sentinel_mcp.policy.knowledge import Knowledge
from sentinel_mcp.policy.prolog_text import OptionAtom, fact_text, term_text
from sentinel_mcp.policy.rulebase import load_rulebase

pytestmark = pytest.mark.timeout(60)

SEEDS = {"seeded_text": "true", "seeded_bool": True, "seeded_null_text": "null", "seeded_null": None}
# (predicate, argument, the canonical fact text, the JSON args stored)
FACTS: list[tuple[str, Any, str, list[Any]]] = [
    ("flag_text", "true", 'flag_text(d,"true")', ["d", "true"]),
    ("flag_bool", True, "flag_bool(d,true)", ["d", True]),
    ("off_text", "false", 'off_text(d,"false")', ["d", "false"]),
    ("off_bool", False, "off_bool(d,false)", ["d", False]),
    ("none_text", "null", 'none_text(d,"null")', ["d", "null"]),
    ("none", None, "none(d,null)", ["d", None]),
    ("nested", {"ok": "true", "list": ["false", False]}, 'nested(d,json([ok="true",list=["false",false]]))',
     ["d", {"ok": "true", "list": ["false", False]}]),
    ("plain", "TRUE", "plain(d,'TRUE')", ["d", "TRUE"]),
]
# what each fact's argument must be in the mirror (a Prolog test on X)
TYPES = {"flag_text": 'X == "true"', "flag_bool": "X == true", "off_text": 'X == "false"',
         "off_bool": "X == false", "none_text": 'X == "null"', "none": "X == null",
         "nested": 'X == json([ok="true", list=["false", false]])', "plain": "X == 'TRUE'"}
SEED_TYPES = {"seeded_text": 'X == "true"', "seeded_bool": "X == true", "seeded_null_text": 'X == "null"',
              "seeded_null": "X == null"}


def test_a_text_spelling_a_literal_is_written_as_a_string() -> None:
    assert term_text("true") == '"true"' and term_text(True) == "true"
    assert term_text("null") == '"null"' and term_text(None) == "null"
    assert term_text(["false", False]) == '["false",false]'
    assert term_text("TRUE") == "'TRUE'" and term_text("true ") == "'true '"
    # a choice's option is the rulebase's own atom, whatever it spells
    assert term_text(OptionAtom("true")) == "'true'"
    assert fact_text("f", ["true", True]) == "'f'(\"true\",true)"


async def _mirror_holds(engine: PrologEngine, mod: str, goal: str) -> bool:
    try:
        await engine.goal(goal.replace("MOD", mod))
    except EngineError:
        return False
    return True


async def _check(engine: PrologEngine, knowledge: Knowledge, rb: Any, session: str) -> None:
    mod = await knowledge.ensure(session, rb)
    for pred, test in TYPES.items():
        fact = f"sentinel_core:stored_fact(MOD, {pred}(d, X), _, _)"
        assert await _mirror_holds(engine, mod, f"{fact}, {test}"), pred
        if pred.endswith("_text"):  # never the literal it spells
            literal = f"{fact}, ( X == true ; X == false ; X == null )"
            assert not await _mirror_holds(engine, mod, literal), pred
    for pred, test in SEED_TYPES.items():
        fact = f"sentinel_core:stored_fact(MOD, {pred}(X), _, _)"
        assert await _mirror_holds(engine, mod, f"{fact}, {test}"), pred
    assert await _mirror_holds(engine, mod, "sentinel_core:stored_fact(MOD, '$context'(doc, X), _, _), "
                                            'X == "true"')


async def test_facts_sentinel_writes_keep_texts_and_literals_apart_through_a_restart(tmp_path: Path) -> None:
    rules = tmp_path / "t.pl"
    rules.write_text("context(doc).\nguard('t__go', [], true).\n")
    engine = PrologEngine()
    engine.start()
    rb = await load_rulebase(engine, [rules])
    store = await FactStore(tmp_path / "facts.db").open()
    try:
        knowledge = Knowledge(store, engine, "lit1", SEEDS)
        await knowledge.ensure("s1", rb)
        facts = [await knowledge.new_fact("s1", pred, ["d", value], "user") for pred, value, _, _ in FACTS]
        assert [(f.fact, f.args) for f in facts] == [(text, args) for _, _, text, args in FACTS]
        await knowledge.add(facts)
        await knowledge.bind_context("s1", "doc", "true")
        await _check(engine, knowledge, rb, "s1")
        await knowledge.forget_sessions()
    finally:
        await store.close()
    # a restart: the store read back into a new mirror
    store = await FactStore(tmp_path / "facts.db").open()
    try:
        knowledge = Knowledge(store, engine, "lit2", SEEDS)
        await _check(engine, knowledge, rb, "s1")
        stored = {f.predicate: f.args for f in await store.valid("s1")}
        assert all(stored[p] == args for p, _, _, args in FACTS)
    finally:
        await store.close()


async def test_a_fact_rebuilt_from_its_json_args_keeps_the_texts_apart() -> None:
    engine = PrologEngine()
    engine.start()
    goal = ("sentinel_core:sn_fact_from_json(f, '[\"true\",true,\"null\",null,{\"k\":\"false\"}]', A), "
            "A == 'f(\"true\",true,\"null\",null,json([k=\"false\"]))'")
    await engine.goal(goal)


async def test_a_context_value_is_checked_as_it_is_bound(tmp_path: Path) -> None:
    """A context's check sees the value with the type it is bound with: the text "true" is no boolean."""
    rules = tmp_path / "c.pl"
    rules.write_text("context(flag_of_interest, V, V == true).\nguard('t__go', [], true).\n")
    engine = PrologEngine()
    engine.start()
    rb = await load_rulebase(engine, [rules])
    ok = await engine.context_check(rb.module, "s_ctx", 1.0, "flag_of_interest", True)
    text = await engine.context_check(rb.module, "s_ctx", 1.0, "flag_of_interest", "true")
    assert ok["status"] == "proved" and text["status"] == "failed", (ok, text)
