"""A person's text answer is judged and kept in Unicode's composed form (NFC), through the real gateway (a
real stdio upstream, the real policy engine, the real client in both eras).

macOS's input, some keyboards and a name pasted from a file listing give a decomposed "Mi" + "a" + U+0301
for "Mía": the person sees "Mía", the rule's record holds the composed "Mía". The answer was kept as sent:
a blocked "Mía" answered decomposed did not match ``blocked_name('Mía')`` and the call the rule forbids went
through; an allowed "José" answered decomposed was refused, and asked again for what the person had typed.
An answer is a fact, never a tool's argument, so it is composed (``answer_validation.composed``), not
refused; the agent's ``sentinel_answer`` is a tool call, and its arguments are refused when not NFC (the
third way in, kept)."""

from __future__ import annotations

import unicodedata
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
    return make_config(data_dir, servers={"tb": toolbox_stdio()}, builtins=["sentinel"],
                       rulebases=[str(RULEBASES_DIR / "default.pl"), str(rules)])


def _text(r: Any) -> str:
    return str(r.content[0].text)


def _answering(value: str) -> Any:
    async def answer(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"answer": value})
    return answer


@pytest.mark.parametrize("value", BLOCKED.values(), ids=BLOCKED.keys())
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_decomposed_blocked_name_is_the_blocked_name(data_dir: Path, value: str, mode: str) -> None:
    assert not unicodedata.is_normalized("NFC", value)
    async with running_gateway(_config(data_dir)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=_answering(value)) as raw:
            r = await Carried(raw).call_tool("tb__echo", {"text": "flight 7"})
            assert r.is_error, f"{value!r} passed for a blocked name: {_text(r)}"
            r = await Carried(raw).call_tool("tb__echo", {"text": "flight 8"})
            assert r.is_error, f"{value!r} passed for a blocked name: {_text(r)}"


@pytest.mark.parametrize("value", ALLOWED.values(), ids=ALLOWED.keys())
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_decomposed_allowed_name_is_the_allowed_name(data_dir: Path, value: str, mode: str) -> None:
    marker = data_dir / "m.txt"
    async with running_gateway(_config(data_dir)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=_answering(value)) as raw:
            r = await Carried(raw).call_tool("tb__write_marker", {"path": str(marker), "text": "x"})
            assert not r.is_error, f"{value!r} refused for an allowed name: {_text(r)}"
    assert marker.read_text() == "x\n"


async def test_the_agents_decomposed_answer_is_refused_as_an_argument(data_dir: Path) -> None:
    marker = data_dir / "m.txt"
    async with running_gateway(_config(data_dir)) as rt:
        async with Client(rt.front.server, mode="legacy") as c:
            args = {"predicate": "traveller", "inputs": [str(marker)], "answer": BLOCKED["NFD Mia"]}
            r = await c.call_tool("sentinel__sentinel_answer", args)
            assert r.is_error and "NFC" in _text(r), _text(r)
