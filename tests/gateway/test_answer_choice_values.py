"""A choice's answer is the choice as the rulebase wrote it, through the real gateway (a real stdio upstream,
the real policy engine, the real client in both eras).

An elicitation offered every choice as a string constant (``"3"`` for the rulebase's ``3``; ``1`` and ``"1"``,
``true`` and ``"true"`` one text each), and a chosen text was stored as an atom: the rulebase's ``"2"`` (a
string) was kept as ``'2'``, which its rule ``L == "2"`` does not match. Each choice is now offered as its own
JSON value (the number 3, the text "2", the boolean true), an answer is taken only of that type (the text "3"
for the number 3 is refused, never coerced), and the fact holds the term the rulebase declared. Two choices
an answer (or a person) could not tell apart make no question: the rulebase does not load.

The rows on RULES share one gateway for the module (a gateway start, its upstream's interpreter and imports,
was most of each row's time): each row is a connection (a session) of its own and asks about a marker path of
its own (its tmp_path), so no row's answer or fact names another's path; the last test shows a path answered
in one session is asked again in the next."""

from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator

import pytest
import pytest_asyncio
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR
from tests.support.carried_session import Carried
from tests.support.held_context import held

from .helpers import make_config, toolbox_stdio

pytestmark = [pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]
RULES = """
askable(level(P, L), "Which level for ~w?",
        choice([1, 2.5, 3 - "Three", top, "2" - "Two, a text", true - "On"]), [from([user])]).
blocked_level(3).
blocked_level(2.5).
allowed(blocked, L) :- \\+ blocked_level(L).
allowed(one, L) :- L == 1.
allowed(text_two, L) :- L == "2".
allowed(on, L) :- L == true.
guard('tb__write_marker', [path = P, text = T], (level(P, L), allowed(T, L))).
"""


def _config(data_dir: Path, rules_text: str = RULES) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = data_dir / "levels.pl"
    rules.write_text(rules_text)
    return make_config(data_dir, servers={"tb": toolbox_stdio(fork=True)}, builtins=["sentinel"],
                       rulebases=[str(RULEBASES_DIR / "default.pl"), str(rules)])


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    async for rt in held(running_gateway(_config(tmp_path_factory.mktemp("levels") / "state"))):
        yield rt


def _choosing(value: Any, offered_as: Any = None) -> Any:
    """Answers ``value``; the form must offer ``offered_as`` (``value`` itself unless said), of its type."""
    want = value if offered_as is None else offered_as

    async def answer(ctx: Any, params: Any) -> ElicitResult:
        offered = [o["const"] for o in params.requested_schema["properties"]["answer"]["oneOf"]]
        assert any(type(o) is type(want) and o == want for o in offered), offered
        return ElicitResult(action="accept", content={"answer": value})

    return answer


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("chosen", [3, 2.5])
async def test_a_chosen_number_is_the_number_the_rule_names(shared: Any, tmp_path: Path, mode: str,
                                                            chosen: str) -> None:
    marker = tmp_path / "m.txt"
    async with Client(shared.front.server, mode=mode, elicitation_callback=_choosing(chosen)) as raw:
        r = await Carried(raw).call_tool("tb__write_marker", {"path": str(marker), "text": "blocked"})
        assert r.is_error, f"the blocked level {chosen} passed: {r.content[0].text}"
    assert not marker.exists()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize(("chosen", "text", "stored"),
                         [(1, "one", "1"), ("top", "blocked", "top"), ("2", "text_two", '"2"'),
                          (True, "on", "true")])
async def test_a_choice_holds_for_the_value_chosen(shared: Any, tmp_path: Path, mode: str, chosen: Any,
                                                   text: str, stored: str) -> None:
    marker = tmp_path / "m.txt"
    async with Client(shared.front.server, mode=mode, elicitation_callback=_choosing(chosen)) as raw:
        c = Carried(raw)
        r = await c.call_tool("tb__write_marker", {"path": str(marker), "text": text})
        assert not r.is_error, r.content[0].text
        facts = (await c.call_tool("sentinel__sentinel_facts", {})).content[0].text
        assert f"level('{marker}',{stored})" in facts.replace(" ", ""), facts
    assert marker.read_text() == f"{text}\n"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize(("given", "offered_as"),
                         [("1", 1), ("2.5", 2.5), ("true", True), (2, "2"), ("3", 3)])
async def test_an_answer_of_another_type_than_its_choice_is_refused(shared: Any, tmp_path: Path, mode: str,
                                                                  given: Any, offered_as: Any) -> None:
    marker = tmp_path / "m.txt"
    async with Client(shared.front.server, mode=mode,
                      elicitation_callback=_choosing(given, offered_as)) as raw:
        r = await Carried(raw).call_tool("tb__write_marker", {"path": str(marker), "text": "one"})
        assert r.is_error, r.content[0].text
        assert "not accepted" in r.content[0].text or "not one of" in r.content[0].text, r.content[0].text
    assert not marker.exists()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("choices", ["['1', \"1\"]", "[1, 1.0]", "[yes - \"Yes\", 'Yes']"])
async def test_choices_an_answer_cannot_tell_apart_are_asked_of_no_one(data_dir: Path, mode: str,
                                                                      choices: str) -> None:
    seen: list[Any] = []

    async def answer(ctx: Any, params: Any) -> ElicitResult:
        seen.append(params)
        return ElicitResult(action="decline")

    rules = (f'askable(level(P, L), "Which level for ~w?", choice({choices}), [from([user])]).\n'
             "guard('tb__write_marker', [path = P, text = _], level(P, _)).\n")
    marker = data_dir / "m.txt"
    async with running_gateway(_config(data_dir, rules)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=answer) as raw:
            r = await Carried(raw).call_tool("tb__write_marker", {"path": str(marker), "text": "one"})
    assert r.is_error and seen == [], (r.content[0].text, seen)
    # refused at load, naming the line (tests/policy/test_askable_choice_lists.py), so never asked
    assert "levels.pl:1" in r.content[0].text and "could not tell them apart" in r.content[0].text, r.content
    assert not marker.exists()


async def test_the_shared_gateway_keeps_no_rows_answer_for_the_next_row(shared: Any, tmp_path: Path) -> None:
    """Why the rows may share a gateway: what one connection's user answered is not taken as the next
    connection's answer (the next is asked again, and its own answer decides), and one row's path is no
    other's."""
    marker = tmp_path / "m.txt"
    asked: list[Any] = []

    def counted(value: Any) -> Any:
        inner = _choosing(value)

        async def answer(ctx: Any, params: Any) -> ElicitResult:
            asked.append(params.message)
            return await inner(ctx, params)

        return answer

    async with Client(shared.front.server, mode="auto", elicitation_callback=counted(1)) as raw:
        r = await Carried(raw).call_tool("tb__write_marker", {"path": str(marker), "text": "one"})
        assert not r.is_error and len(asked) == 1, (r.content[0].text, asked)
    async with Client(shared.front.server, mode="auto", elicitation_callback=counted(3)) as raw:
        r = await Carried(raw).call_tool("tb__write_marker", {"path": str(marker), "text": "one"})
        assert r.is_error and len(asked) == 2, (r.content[0].text, asked)
    assert marker.read_text() == "one\n"
