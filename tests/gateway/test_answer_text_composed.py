"""A person's text answer is judged and kept in Unicode's composed form (NFC), through the real gateway (a
real stdio upstream, the real policy engine, the real client in both eras).

macOS's input, some keyboards and a name pasted from a file listing give a decomposed "Mi" + "a" + U+0301
for "Mía": the person sees "Mía", the rule's record holds the composed "Mía". The answer was kept as sent:
a blocked "Mía" answered decomposed did not match ``blocked_name('Mía')`` and the call the rule forbids went
through; an allowed "José" answered decomposed was refused, and asked again for what the person had typed.
An answer is a fact, never a tool's argument, so it is composed (``answer_validation.composed``), not
refused; the agent's ``sentinel_answer`` is a tool call, and its arguments are refused when not NFC (the
third way in, kept).

The rows share one gateway for the module (its start was most of each row's time): each is a connection (a
session) of its own and asks about a path or a flight of its own (its tmp_path's name), so no row's answer is
about another's (test_answer_choice_values.py shows a second connection is asked again)."""

from __future__ import annotations

import unicodedata
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
askable(traveller(P, N), "Who travels on ~w?", text, [from([user, agent])]).
allowed_name('Jos\u00e9').
allowed_name('\u00c5sa').
blocked_name('M\u00eda').
blocked_name('\uac15\ubbfc').
guard('tb__write_marker', [path = P, text = _], (traveller(P, N), allowed_name(N))).
guard('tb__echo', [text = T], (traveller(T, N), \\+ blocked_name(N))).
"""
NFD = "NFD"
# decomposed spellings a person cannot tell from the record's: combining marks, Hangul jamo, mixed
BLOCKED = {"NFD Mia": unicodedata.normalize(NFD, "M\u00eda"),
           "jamo": unicodedata.normalize(NFD, "\uac15\ubbfc"), "half": "M\u0069\u0301a"}
ALLOWED = {"NFD Jose": unicodedata.normalize(NFD, "Jos\u00e9"),
           "NFD Asa": unicodedata.normalize(NFD, "\u00c5sa"),
           "A and ring": "A\u030asa", "the Angstrom sign": "\u212bsa", "NFC": "Jos\u00e9"}


def _config(data_dir: Path) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = data_dir / "travel.pl"
    rules.write_text(RULES)
    return make_config(data_dir, servers={"tb": toolbox_stdio(fork=True)}, builtins=["sentinel"],
                       rulebases=[str(RULEBASES_DIR / "default.pl"), str(rules)])


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    async for rt in held(running_gateway(_config(tmp_path_factory.mktemp("travel") / "state"))):
        yield rt


def _text(r: Any) -> str:
    return str(r.content[0].text)


def _answering(value: str) -> Any:
    async def answer(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"answer": value})
    return answer


@pytest.mark.parametrize("value", BLOCKED.values(), ids=BLOCKED.keys())
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_decomposed_blocked_name_is_the_blocked_name(shared: Any, tmp_path: Path,
                                                             value: str, mode: str) -> None:
    assert not unicodedata.is_normalized("NFC", value)
    async with Client(shared.front.server, mode=mode, elicitation_callback=_answering(value)) as raw:
        r = await Carried(raw).call_tool("tb__echo", {"text": f"flight 7 of {tmp_path.name}"})
        assert r.is_error, f"{value!r} passed for a blocked name: {_text(r)}"
        r = await Carried(raw).call_tool("tb__echo", {"text": f"flight 8 of {tmp_path.name}"})
        assert r.is_error, f"{value!r} passed for a blocked name: {_text(r)}"


@pytest.mark.parametrize("value", ALLOWED.values(), ids=ALLOWED.keys())
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_decomposed_allowed_name_is_the_allowed_name(shared: Any, tmp_path: Path,
                                                             value: str, mode: str) -> None:
    marker = tmp_path / "m.txt"
    async with Client(shared.front.server, mode=mode, elicitation_callback=_answering(value)) as raw:
        r = await Carried(raw).call_tool("tb__write_marker", {"path": str(marker), "text": "x"})
        assert not r.is_error, f"{value!r} refused for an allowed name: {_text(r)}"
    assert marker.read_text() == "x\n"


async def test_the_agents_decomposed_answer_is_refused_as_an_argument(shared: Any, tmp_path: Path) -> None:
    marker = tmp_path / "m.txt"
    async with Client(shared.front.server, mode="legacy") as c:
        args = {"predicate": "traveller", "inputs": [str(marker)], "answer": BLOCKED["NFD Mia"]}
        r = await c.call_tool("sentinel__sentinel_answer", args)
        assert r.is_error and "NFC" in _text(r), _text(r)
