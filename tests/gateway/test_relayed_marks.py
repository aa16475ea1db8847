"""Sentinel's own wording around a marked value is one marked text: shown again (the CLI, the inbox, the
console), a real hidden character in an upstream's question, a server's URI or name still reads as exactly
one ``⟨U+202E⟩``, never ``⟨U+27E8⟩U+202E⟨U+27E9⟩`` (which reads as if the value typed the mark out).

Real gateway, the upstream a real MCP server in a subprocess, the CLI's own elicitation handler."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.app.terminal_client import call_once
from sentinel_mcp.core.display_text import Marked, safe_question, safe_text, shown
from sentinel_mcp.gateway.foreign_resources import _note
from sentinel_mcp.gateway.front_held import relayed_question

from .helpers import make_config

pytestmark = pytest.mark.timeout(90)
RELAY = str(Path(__file__).with_name("relay_server.py"))
ONCE = "Delete report⟨U+202E⟩fdp.exe?"


def _marked_once(text: str, needle: str = "⟨U+202E⟩") -> bool:
    return text.count(needle) == 1 and "U+27E8" not in text and "U+27E9" not in text


@pytest.mark.parametrize("of_calls", [1, 3])
def test_a_relayed_question_shown_again_keeps_its_marks(of_calls: int) -> None:
    asked = relayed_question("Delete report\u202efdp.exe?", "the server rl", of_calls, principal=None)
    assert isinstance(asked, Marked) and ONCE in asked
    for again in (safe_text(asked), shown(asked).text, safe_question(asked)[0]):
        assert _marked_once(again), again
    # a typed-out mark in the upstream's words stays marked through the same path
    typed = relayed_question("Delete report⟨U+202E⟩fdp.exe?", "the server rl", of_calls, principal=None)
    assert "report⟨U+27E8⟩U+202E⟨U+27E9⟩fdp.exe" in safe_text(typed)


def test_a_withheld_resource_note_shown_again_keeps_its_marks() -> None:
    note = _note("fs", "file:///tmp/report\u202efdp.exe", "web")
    assert isinstance(note, Marked)
    assert _marked_once(safe_text(note)) and _marked_once(shown(note).text)
    # the server names in it are marked too (a raw name's brackets can never pass for a mark)
    assert "⟨U+27E8⟩" in _note("f⟨s", "file:///x", "Sentinel")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_upstreams_hidden_character_reaches_the_client_marked_once(data_dir, mode) -> None:  # noqa: ANN001
    cfg = make_config(data_dir, servers={"rl": {"command": sys.executable, "args": [RELAY]}})
    asked: list[str] = []

    async def on_elicit(ctx, params):  # noqa: ANN001
        asked.append(params.message)
        return ElicitResult(action="accept", content={"ok": True})

    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=on_elicit) as c:
            r = await c.call_tool("rl__hidden_question", {})
            assert r.content[0].text == "hidden_question:accept", r.content[0].text
    assert len(asked) == 1 and ONCE in asked[0] and _marked_once(asked[0]), asked


async def test_the_cli_shows_an_upstreams_hidden_character_marked_once(data_dir, capsys) -> None:  # noqa: ANN001
    """``sentinel-mcp call`` hears only Sentinel's front, whose questions are marked there: it shows the
    question with Sentinel's marks kept (before, it marked them again)."""
    cfg = make_config(data_dir, servers={"rl": {"command": sys.executable, "args": [RELAY]}})
    code = await call_once("rl__hidden_question", {}, config=cfg, url=None, token=None, assume_yes=True)
    out = capsys.readouterr()
    assert code == 0 and "hidden_question:accept" in out.out, (out.out, out.err)
    assert ONCE in out.err and _marked_once(out.err), out.err


@pytest.mark.parametrize("schema,content", [
    ({"type": "object", "properties": {"n": {"type": "number"}}}, {"n": "report\u202efdp.exe"}),
    ({"type": "object", "properties": {"c": {"enum": ["report\u202efdp.exe", "b"]}}}, {"c": "x"}),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
     {"report\u202efdp.exe": 1}),
    ({"type": "object", "required": ["report\u202efdp.exe"], "properties": {}}, {}),
    ({"type": "object", "properties": {"report\u202efdp.exe": {"type": "boolean"}}},
     {"report\u202efdp.exe": 1}),
    ({"type": "object"}, "report\u202efdp.exe"),
])
def test_why_an_answer_is_refused_shown_again_keeps_its_marks(schema, content) -> None:  # noqa: ANN001
    """The reason an answer is refused quotes the answer's and the schema's words marked: shown again (with
    the question it is asked again with, in a result), a real override still reads as one mark."""
    from sentinel_mcp.core.answer_validation import content_problem

    problem = content_problem(schema, content)
    assert isinstance(problem, Marked) and "⟨U+202E⟩" in problem, problem
    assert _marked_once(safe_text(problem)), safe_text(problem)
