"""A text answer becomes its fact in Unicode's composed form (NFC), whichever way it comes in: the console's
form (``read_answer``), an answer given through the gateway as the user or as an agent (a client's form, an
A2A peer answering where allowed: ``record_answer``), and ``PolicyService.answer`` (the agent's
``sentinel_answer`` and in-process callers, which cross no argument check). A person sees "Mía" whether it
is typed composed or decomposed; the fact a rule compares holds the one spelling records hold. A choice
answered in another spelling of its value is that choice. Real SWI-Prolog and fact store."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
import pytest_asyncio
from tests.policy.policy_rig import make_guard

from sentinel_mcp.console.answer_form import read_answer
from sentinel_mcp.core.decision import Allow, Answer, Ask, Deny, ToolCall
from sentinel_mcp.policy.policy_service import PolicyService

pytestmark = [pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

RULEBASE = """
askable(traveller(X, N), "Who travels on ~w?", text, [from([user, agent])]).
askable(reply(X, R), "Go ahead with ~w?", choice(['S\u00ed', 'Non']), [from([user, agent])]).
blocked_name('M\u00eda').
guard('air__book', [flight = X], ( traveller(X, N), \\+ blocked_name(N) )).
guard('air__hold', [flight = X], reply(X, 'S\u00ed')).
"""
MIA = "M\u00eda"
SPELLINGS = {"NFD": unicodedata.normalize("NFD", MIA), "half": "Mi\u0301a", "NFC": MIA}
_n = iter(range(10_000))


def call(tool: str, flight: str) -> ToolCall:
    return ToolCall(name=f"air__{tool}", server="air", tool=tool, arguments={"flight": flight},
                    session_id="s1", principal="owner", destructive=True)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def guard(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("composed")
    (tmp / "air.pl").write_text(RULEBASE)
    g = await make_guard(None, tmp / "facts.db", files=[tmp / "air.pl"], seeds={})
    yield g
    await g.close()


async def _asked(guard: Any, c: ToolCall) -> Any:
    d = await guard.decide(c)
    assert isinstance(d, Ask), d
    return d.questions[0]


async def _held(guard: Any, predicate: str, flight: str) -> list[Any]:
    facts = await guard.store.valid("s1")
    return [f.args[1] for f in facts if f.predicate == predicate and f.args[0] == flight]


async def _way(guard: Any, way: str, c: ToolCall, value: str) -> None:
    if way == "service":
        service = PolicyService(guard)
        await service.answer("s1", "traveller", [c.arguments["flight"]], value, principal="owner")
        return
    q = await _asked(guard, c)
    if way == "console":
        answer, problem = read_answer(0, q, {"q0.answer": value}, approve=True)
        assert problem is None and answer is not None, problem
    else:
        answer = Answer(action="accept", content={"answer": value}, provenance=way)  # type: ignore[arg-type]
    await guard.record_answer(c, q, answer)


@pytest.mark.parametrize("value", SPELLINGS.values(), ids=SPELLINGS.keys())
@pytest.mark.parametrize("way", ["console", "user", "agent", "service"])
async def test_a_text_answer_is_kept_composed(guard: Any, value: str, way: str) -> None:
    flight = f"F{next(_n)}"
    c = call("book", flight)
    await _way(guard, way, c, value)
    assert await _held(guard, "traveller", flight) == [MIA]
    assert isinstance(await guard.decide(c), Deny)  # the blocked name, however it was spelled


@pytest.mark.parametrize("way", ["console", "user"])
async def test_a_choice_answered_in_another_spelling_is_the_choice(guard: Any, way: str) -> None:
    flight = f"F{next(_n)}"
    c = call("hold", flight)
    q = await _asked(guard, c)
    si = unicodedata.normalize("NFD", "S\u00ed")
    if way == "console":
        answer, problem = read_answer(0, q, {"q0.answer": si}, approve=True)
        assert problem is None and answer is not None, problem
    else:
        answer = Answer(action="accept", content={"answer": si}, provenance="user")
    await guard.record_answer(c, q, answer)
    assert await _held(guard, "reply", flight) == ["S\u00ed"]
    assert isinstance(await guard.decide(c), Allow)
