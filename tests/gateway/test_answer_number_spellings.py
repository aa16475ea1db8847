"""A number answer is one value whatever its JSON spelling, through the real gateway (a real stdio upstream,
the real policy engine, the real client in both eras): ``13``, ``13.0`` and ``1.3e1`` are one JSON number.

The gateway already decides on arguments with every integral number made the integer it equals
(``core/json_numbers.py``). The user's answers were kept as sent: ``13.0`` became the fact
``copies(P, 13.0)``, which a rule's ``blocked_count(13)`` does not match, so ``\\+ blocked_count(N)`` held
and the call the rule forbids went through (pushed and 2026-era answers alike). The agent's
``sentinel_answer`` is a tool call, whose arguments were already in one form: kept here as the third way
in.

The rows share one gateway for the module (its start was most of each row's time): each is a connection (a
session) of its own and answers about paths under its own tmp_path, so no row's answer is about another's
path (test_answer_choice_values.py shows a second connection is asked again)."""

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
askable(copies(P, N), "How many copies of ~w?", number, [from([user, agent])]).
blocked_count(13).
blocked_count(0).
guard('tb__write_marker', [path = P, text = _], (copies(P, N), \\+ blocked_count(N))).
"""
# the blocked 13 and 0 as integral floats (13.0, 1.3e1 and 1300e-2 all parse to 13.0; -0.0 is 0)
BLOCKED = [13.0, 0.0, -0.0]


def _config(data_dir: Path) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = data_dir / "copies.pl"
    rules.write_text(RULES)
    return make_config(data_dir, servers={"tb": toolbox_stdio(fork=True)}, builtins=["sentinel"],
                       rulebases=[str(RULEBASES_DIR / "default.pl"), str(rules)])


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    async for rt in held(running_gateway(_config(tmp_path_factory.mktemp("copies") / "state"))):
        yield rt


def _text(r: Any) -> str:
    return str(r.content[0].text)


@pytest.mark.parametrize("value", BLOCKED)
async def test_an_agents_integral_float_is_the_integer_it_equals(shared: Any, tmp_path: Path,
                                                                 value: float) -> None:
    marker = tmp_path / "m.txt"
    async with Client(shared.front.server, mode="legacy") as c:
        r = await c.call_tool("sentinel__sentinel_answer",
                              {"predicate": "copies", "inputs": [str(marker)], "answer": value})
        assert not r.is_error, _text(r)
        assert ".0" not in _text(r), _text(r)  # the fact names the integer
        r = await c.call_tool("tb__write_marker", {"path": str(marker), "text": "x"})
        assert r.is_error, f"{value!r} passed for a blocked count: {_text(r)}"
    assert not marker.exists()


@pytest.mark.parametrize("value", BLOCKED)
async def test_a_pushed_answers_integral_float_is_the_integer_it_equals(shared: Any, tmp_path: Path,
                                                                        value: float) -> None:
    marker = tmp_path / "m.txt"

    async def answer(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"answer": value})

    async with Client(shared.front.server, mode="legacy", elicitation_callback=answer) as c:
        r = await c.call_tool("tb__write_marker", {"path": str(marker), "text": "x"})
        assert r.is_error, f"{value!r} passed for a blocked count: {_text(r)}"
    assert not marker.exists()


@pytest.mark.parametrize("value", BLOCKED)
async def test_a_2026_answers_integral_float_is_the_integer_it_equals(shared: Any, tmp_path: Path,
                                                                      value: float) -> None:
    marker = tmp_path / "m.txt"
    args = {"path": str(marker), "text": "x"}
    async with Client(shared.front.server, mode="auto", elicitation_callback=_never) as raw:
        c = Carried(raw.session)
        r = await c.call_tool("tb__write_marker", args, allow_input_required=True)
        keys = list(r.input_requests)
        assert keys and all(".copies." in k for k in keys), keys
        answers = {k: ElicitResult(action="accept", content={"answer": value}) for k in keys}
        r = await c.call_tool("tb__write_marker", args, allow_input_required=True,
                              request_state=r.request_state, input_responses=answers)
        assert type(r).__name__ == "CallToolResult" and r.is_error, f"{value!r} passed: {r}"
    assert not marker.exists()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_fraction_and_an_allowed_count_still_count(shared: Any, tmp_path: Path, mode: str) -> None:
    async def answer(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"answer": 2.0})

    async with Client(shared.front.server, mode=mode, elicitation_callback=answer) as raw:
        c = Carried(raw)  # one conversation in both eras; the SDK answers with the callback
        r = await c.call_tool("tb__write_marker", {"path": str(tmp_path / "a.txt"), "text": "x"})
        assert not r.is_error, _text(r)
        b = str(tmp_path / "b.txt")
        fraction = {"predicate": "copies", "inputs": [b], "answer": 12.5}
        r = await c.call_tool("sentinel__sentinel_answer", fraction)
        assert not r.is_error and "12.5" in _text(r), _text(r)
        r = await c.call_tool("tb__write_marker", {"path": str(tmp_path / "b.txt"), "text": "y"})
        assert not r.is_error, _text(r)
    assert (tmp_path / "a.txt").read_text() == "x\n" and (tmp_path / "b.txt").read_text() == "y\n"


async def _never(ctx: Any, params: Any) -> ElicitResult:
    raise AssertionError("a 2026-era call is answered through inputResponses")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_integral_number_too_long_for_the_wire_is_no_answer(shared: Any, tmp_path: Path,
                                                                     mode: str) -> None:
    """``1e300`` is an integer of 301 digits: refused as an argument, and as an answer too (said so)."""
    marker = tmp_path / "m.txt"

    async def answer(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"answer": 1e300})

    async with Client(shared.front.server, mode=mode, elicitation_callback=answer) as raw:
        r = await Carried(raw).call_tool("tb__write_marker", {"path": str(marker), "text": "x"})
        assert r.is_error and "not accepted" in _text(r) and "digits" in _text(r), _text(r)
    assert not marker.exists()
