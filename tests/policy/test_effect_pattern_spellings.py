"""A write's effect names the facts it invalidates by the call's arguments, written as a pattern (``~q``) and
read back (``term_to_atom``) before it is applied to the session's mirror and store. Every spelling a client
can send round-trips to the very fact the guard holds: texts spelling JSON's literals, quotes, backslashes,
text that reads as a variable (``X``, ``_X``), ``[]`` and ``{}``, NUL, a lone surrogate, non-ASCII, numbers,
booleans, null, lists and objects. A spelling that came back as another term (a variable, a code list) would
leave the cancelled booking's "confirmed" standing, or clear another's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.policy.engine import PrologEngine
from sentinel_mcp.policy.prolog_text import fact_text
from sentinel_mcp.policy.rulebase import load_rulebase

pytestmark = pytest.mark.timeout(60)

RULES = """
fact(status/2).
fact(cancelled/1).
effect('t__cancel', [id = B], [invalidate(status(B, _)), establish(cancelled(B))]).
"""
SPELLINGS: list[Any] = ["true", "null", "false", "x", "a b", "It's", "[]", "{}", "'", "\\", "_X", "X", "_",
                        "1", "-", "é", "0'a", "a:b", "f(x)", "\\+ x", "\x00", "\ud800", "\U0010f7ff",
                        12, -0.5, 1.5e300, 2 ** 70, True, None, ["a", 1], {"k": "v"}, {"a": {"b": [None]}}]


async def test_an_effect_invalidates_exactly_the_fact_of_the_call(tmp_path: Path) -> None:
    rules = tmp_path / "t.pl"
    rules.write_text(RULES)
    eng = PrologEngine()
    eng.start()
    rb = await load_rulebase(eng, [rules])
    for i, value in enumerate(SPELLINGS):
        session = f"s{i}"
        mine = fact_text("status", [value, "confirmed"])
        other = fact_text("status", ["another", "confirmed"])
        await eng.assert_facts(session, [(mine, None, "observed"), (other, None, "observed")])
        acts = await eng.effect_actions(rb.module, session, "t__cancel", {"id": value}, 0.0)
        removed = [r for pattern in acts["invalidate"] for r in await eng.retract(session, pattern)]
        assert removed == [(await eng.fact_json(mine))["fact"]], (value, acts, removed)
        assert acts["establish"] == [(await eng.fact_json(fact_text("cancelled", [value])))["fact"]], value
