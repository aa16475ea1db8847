"""What a caller says becomes a fact only within the limits facts are kept within (``FACT_VALUE``,
``core/record_bounds.py``), through the real gateway (a real stdio upstream, real SQLite, the real client).

A tool's result past them teaches no fact (``policy/fact_bounds.py``); an answer or a focus was kept whatever
its size: a client answering the user's text question, or the agent calling ``sentinel_answer`` or
``sentinel_bind``, with a few megabytes wrote a fact of a few megabytes into the store per call (read back by
every decision of the conversation, listed in every summary). A fact cannot be kept cut (a cut text is
another answer), so such an answer is not an answer, and such a focus is not bound, said so."""

from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator

import pytest
import pytest_asyncio
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.record_bounds import FACT_VALUE
from sentinel_mcp.paths import RULEBASES_DIR
from tests.support.carried_session import Carried
from tests.support.held_context import held

from .helpers import make_config, toolbox_stdio

pytestmark = [pytest.mark.timeout(180), pytest.mark.asyncio(loop_scope="module")]
RULES = """
askable(note(P, N), "What note for ~w?", text, [from([user, agent])]).
context(focus).
guard('tb__write_marker', [path = P, text = _], note(P, _)).
"""
# past the limits: one long text, and texts whose JSON escapes make them long (each hidden character is 6)
HUGE = ["n" * 1_000_000, "n" * (FACT_VALUE.chars + 1), "\u202e" * (FACT_VALUE.chars // 6 + 1)]


def _config(data_dir: Path) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = data_dir / "notes.pl"
    rules.write_text(RULES)
    return make_config(data_dir, servers={"tb": toolbox_stdio(fork=True)}, builtins=["sentinel"],
                       rulebases=[str(RULEBASES_DIR / "default.pl"), str(rules)])


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    """One gateway for the module (its start was most of each row's time): each row is a connection (a
    session) of its own about a path under its own tmp_path; ``_largest`` then reads every row's facts."""
    async for rt in held(running_gateway(_config(tmp_path_factory.mktemp("notes") / "state"))):
        yield rt


def _text(r: Any) -> str:
    return str(r.content[0].text)


async def _largest(rt: Any) -> int:
    """The longest fact or bound context the store holds (every conversation)."""
    store, longest = rt.gateway.guard.store, 0
    for session in await store.sessions():
        for fact in await store.valid(session):
            longest = max(longest, len(fact.fact))
        for value in (await store.contexts(session)).values():
            longest = max(longest, len(str(value)))
    return longest


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("size", range(len(HUGE)))
async def test_a_huge_answer_from_the_client_is_no_answer(shared: Any, tmp_path: Path,
                                                          mode: str, size: int) -> None:
    marker = tmp_path / "m.txt"

    async def answer(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"answer": HUGE[size]})

    async with Client(shared.front.server, mode=mode, elicitation_callback=answer) as raw:
        r = await Carried(raw).call_tool("tb__write_marker", {"path": str(marker), "text": "x"})
        assert r.is_error and "not accepted" in _text(r), _text(r)[:300]
        assert len(_text(r)) < 5000
    assert await _largest(shared) <= 2 * FACT_VALUE.chars
    assert not marker.exists()


@pytest.mark.parametrize("size", range(len(HUGE)))
async def test_a_huge_agent_answer_or_focus_is_refused(shared: Any, tmp_path: Path, size: int) -> None:
    marker = tmp_path / "m.txt"
    async with Client(shared.front.server, mode="legacy") as c:
        r = await c.call_tool("sentinel__sentinel_answer",
                              {"predicate": "note", "inputs": [str(marker)], "answer": HUGE[size]})
        assert r.is_error, _text(r)[:300]
        r = await c.call_tool("sentinel__sentinel_answer",
                              {"predicate": "note", "inputs": [HUGE[size]], "answer": "short"})
        assert r.is_error, _text(r)[:300]
        r = await c.call_tool("sentinel__sentinel_bind", {"context": "focus", "value": HUGE[size]})
        assert r.is_error, _text(r)[:300]
        assert len(_text(r)) < 5000
        r = await c.call_tool("tb__write_marker", {"path": str(marker), "text": "x"})
        assert r.is_error
        # within the limits, all three still count
        ok = "n" * 1000
        r = await c.call_tool("sentinel__sentinel_bind", {"context": "focus", "value": ok})
        assert not r.is_error, _text(r)
        r = await c.call_tool("sentinel__sentinel_answer",
                              {"predicate": "note", "inputs": [str(marker)], "answer": ok})
        assert not r.is_error, _text(r)[:300]
        assert not (await c.call_tool("tb__write_marker", {"path": str(marker), "text": "x"})).is_error
    assert await _largest(shared) <= 2 * FACT_VALUE.chars


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_answer_about_a_huge_argument_is_refused_saying_why(shared: Any, tmp_path: Path,
                                                                     mode: str) -> None:
    """The question's inputs come from the call: a note about a text of 20,000 characters would be a fact
    past the limits whatever the answer; it is refused as not accepted (never a guard error), nothing kept."""
    marker = tmp_path / "m.txt"

    async def answer(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"answer": "short"})

    async with Client(shared.front.server, mode=mode, elicitation_callback=answer) as raw:
        r = await Carried(raw).call_tool("tb__write_marker", {"path": "p" * 20_000, "text": "x"})
        said = _text(r)
        assert r.is_error and "not accepted" in said and "larger than a fact" in said, said[-400:]
    assert await _largest(shared) <= 2 * FACT_VALUE.chars
    assert not marker.exists()
