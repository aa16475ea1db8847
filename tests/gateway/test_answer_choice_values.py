"""A choice's answer is the choice as the rulebase wrote it, through the real gateway (a real stdio upstream,
the real policy engine, the real client in both eras).

An elicitation offers every choice as a string constant (``"3"`` for the rulebase's ``3``). The answer was
kept as that string: the fact ``level(P, '3')``, which the rule's ``blocked_level(3)`` does not match, so
``\\+ blocked_level(L)`` held and the call the rule forbids went through; and ``level(P, 1)`` never held for
the user who chose 1. The chosen constant now names the choice, and the fact holds its value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR
from tests.support.carried_session import Carried

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(120)
RULES = """
askable(level(P, L), "Which level for ~w?", choice([1, 2.5, 3 - "Three", top]), [from([user])]).
blocked_level(3).
blocked_level(2.5).
allowed(blocked, L) :- \\+ blocked_level(L).
allowed(one, L) :- L == 1.
guard('tb__write_marker', [path = P, text = T], (level(P, L), allowed(T, L))).
"""


def _config(data_dir: Path) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = data_dir / "levels.pl"
    rules.write_text(RULES)
    return make_config(data_dir, servers={"tb": toolbox_stdio()}, builtins=["sentinel"],
                       rulebases=[str(RULEBASES_DIR / "default.pl"), str(rules)])


def _choosing(value: str) -> Any:
    async def answer(ctx: Any, params: Any) -> ElicitResult:
        offered = [o["const"] for o in params.requested_schema["properties"]["answer"]["oneOf"]]
        assert value in offered, offered
        return ElicitResult(action="accept", content={"answer": value})

    return answer


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("chosen", ["3", "2.5"])
async def test_a_chosen_number_is_the_number_the_rule_names(data_dir: Path, mode: str, chosen: str) -> None:
    marker = data_dir / "m.txt"
    async with running_gateway(_config(data_dir)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=_choosing(chosen)) as raw:
            r = await Carried(raw).call_tool("tb__write_marker", {"path": str(marker), "text": "blocked"})
            assert r.is_error, f"the blocked level {chosen} passed: {r.content[0].text}"
    assert not marker.exists()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize(("chosen", "text"), [("1", "one"), ("top", "blocked")])
async def test_a_choice_holds_for_the_value_chosen(data_dir: Path, mode: str, chosen: str, text: str) -> None:
    marker = data_dir / "m.txt"
    async with running_gateway(_config(data_dir)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=_choosing(chosen)) as raw:
            c = Carried(raw)
            r = await c.call_tool("tb__write_marker", {"path": str(marker), "text": text})
            assert not r.is_error, r.content[0].text
            facts = (await c.call_tool("sentinel__sentinel_facts", {})).content[0].text
            assert f"level('{marker}',{chosen})" in facts.replace(" ", ""), facts
    assert marker.read_text() == f"{text}\n"
