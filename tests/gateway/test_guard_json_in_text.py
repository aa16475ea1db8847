"""A hostile client hides a list in text: ``statement(accounts: list[int] | str)`` on the SDK's ``MCPServer``
takes ``"[13]"`` as the list [13] (the SDK parses text as JSON for a parameter that is not plain ``str``),
while the guard saw the atom ``'[13]'``, no list, so ``forall(member(A, As), \\+ frozen_account(A))`` held
and the frozen account's statement went out. Such text is refused where the tool does not take plain text;
the value itself is decided on as ever."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.gateway.json_in_text import text_read_as_json

from .guard_probe import bank_config, reached

pytestmark = pytest.mark.timeout(120)
HIDDEN = ["[13]", " [13] ", "[12, 13]", "[\n13\n]", "\t[13.0]", '{"0": 13}']


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_list_hidden_in_text_never_reaches_the_upstream(tmp_path: Path, mode: str) -> None:
    config = parse_config(bank_config(tmp_path), base_dir=str(tmp_path))
    async with running_gateway(config) as rt, Client(rt.front.server, mode=mode) as c:
        for text in HIDDEN:
            r = await c.call_tool("bank__statement", {"accounts": text})
            assert r.is_error and "JSON" in r.content[0].text, (text, r.content[0].text)
        r = await c.call_tool("bank__statement", {"accounts": [13]})
        assert r.is_error, r.content[0].text
        assert reached(tmp_path) == []
        # the value itself, and text that is not JSON, are decided on as before
        for accounts in ([12], "some", "[12"):
            r = await c.call_tool("bank__statement", {"accounts": accounts})
            assert not r.is_error, (accounts, r.content[0].text)
        # plain text is the upstream's text too: JSON in it is just text (the note's guard has no say)
        r = await c.call_tool("bank__transfer", {"account": 12, "amount": 1, "note": "[13]"})
        assert not r.is_error, r.content[0].text
    assert [row["arguments"] for row in reached(tmp_path)] == [
        {"accounts": [12]},
        {"accounts": "some"},
        {"accounts": "[12"},
        {"account": 12, "amount": 1, "note": "[13]"},
    ]


@pytest.mark.parametrize(
    "schema",
    [
        {"anyOf": [{"type": "array"}, {"type": "string"}]},
        {"type": ["string", "array"]},
        {},
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        None,  # not declared at all
    ],
)
def test_text_holding_an_array_or_object_is_refused_unless_the_argument_is_plain_text(schema) -> None:  # noqa: ANN001
    props = {} if schema is None else {"x": schema}
    for text in HIDDEN + ["[]", "{}", ' {"a": [1]} ']:
        assert text_read_as_json({"type": "object", "properties": props}, {"x": text}) is not None, text
    for text in ["null", " null\n"]:  # the SDK reads it as None: no text at all (``to``: the holder's)
        assert text_read_as_json({"type": "object", "properties": props}, {"x": text}) is not None, text
    for text in ["13", '"[13]"', "nulls", "true", "[13", "plain", "", "NaN"]:
        assert text_read_as_json({"type": "object", "properties": props}, {"x": text}) is None, text
    for text in HIDDEN:
        assert text_read_as_json({"properties": {"x": {"type": "string"}}}, {"x": text}) is None


async def test_text_spelling_null_never_reaches_the_upstream_as_none(tmp_path: Path) -> None:
    """Found by red team 'coercion' (rt-coercion): ``send(account, to: str | None)`` took ``"null"`` as None,
    the account holder, while the guard judged the text ``'null'``, an address. Refused like an array in
    text, before the guard (``send`` would otherwise wait for the user's confirmation)."""
    config = parse_config(bank_config(tmp_path), base_dir=str(tmp_path))
    async with running_gateway(config) as rt, Client(rt.front.server) as c:
        for text in ["null", " null", "null\n"]:
            r = await c.call_tool("bank__send", {"account": 12, "to": text})
            assert r.is_error and "JSON" in r.content[0].text, (text, r.content[0].text)
    assert reached(tmp_path) == []
