"""``argument_texts: "as_sent"``: an upstream whose arguments are bytes-exact texts (a file-system server on
HFS+/APFS lists ``cafe\\u0301.txt`` decomposed, and a client passes the name back) gets them as sent, and the
guard judges exactly those texts; a rule comparing atoms compares exactly (a decomposed "café" is not the
rule's composed 'café'). Without the setting, or on another upstream, a text not in NFC is refused before the
guard, as before. Either way a lone surrogate is no text, and two keys of one object that are one name to a
normalizing reader are refused. The setting takes its two values only, a wrong one named with its file and
line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import ConfigError, load_config, parse_config
from sentinel_mcp.core.wire_limits import walk_value

from .pay_probe import PAY, arguments, pay_config

pytestmark = pytest.mark.timeout(180)
MEMO_RULE = "guard('pay__transfer', [memo = M], M == 'caf\u00e9').\n"
NFD_NAME = "cafe\u0301.txt"
DECOMPOSED = [NFD_NAME, "\u1100\u1161\u11a8 notes", "A\u030angstr\u00f6m", "\u212a.txt", "\u0958",
              "c\u0327\u0301"]


def _config(tmp_path: Path, setting: str | None) -> Any:
    raw = pay_config(tmp_path)
    if setting is not None:
        raw["mcpServers"]["pay"]["argument_texts"] = setting
    # a second upstream with the default: its arguments stay refused when not NFC
    other = tmp_path / "other.log"
    other.write_text("")
    raw["mcpServers"]["plain"] = {"command": sys.executable, "args": [PAY], "env": {"PAY_LOG": str(other)}}
    rules = tmp_path / "memo.pl"
    rules.write_text(MEMO_RULE)
    raw["sentinel"]["rulebases"].append(str(rules))
    return parse_config(raw, base_dir=str(tmp_path))


async def test_an_as_sent_upstream_gets_decomposed_texts_as_sent_and_the_guard_judges_them(
    tmp_path: Path,
) -> None:
    async with running_gateway(_config(tmp_path, "as_sent")) as rt, Client(rt.front.server) as c:
        sent = []
        for text in DECOMPOSED:
            for args in ({"name": text}, {"name": "n", text: 1}, {"name": "n", "k": {"deep": [text]}}):
                r = await c.call_tool("pay__tag", args)
                assert not r.is_error, (text, r.content[0].text)
                sent.append(args)
        # the rule compares atoms exactly: the composed memo is the rule's, the decomposed one is not
        r = await c.call_tool("pay__transfer", {"amount": 1, "memo": "caf\u00e9"})
        assert not r.is_error, r.content[0].text
        r = await c.call_tool("pay__transfer", {"amount": 1, "memo": "cafe\u0301"})
        assert r.is_error and "conditions do not hold" in r.content[0].text, r.content[0].text
        # two keys of one object that are one name to a normalizing reader: refused still
        r = await c.call_tool("pay__tag", {"name": "n", "caf\u00e9": 1, "cafe\u0301": 2})
        assert r.is_error, r.content[0].text
        # the other upstream keeps the default
        r = await c.call_tool("plain__tag", {"name": NFD_NAME})
        assert r.is_error and "NFC" in r.content[0].text, r.content[0].text
    assert arguments(tmp_path) == [*sent, {"amount": 1, "memo": "caf\u00e9", "currency": "BTC"}]
    assert (tmp_path / "other.log").read_text() == ""


@pytest.mark.parametrize("setting", [None, "nfc"])
async def test_by_default_a_decomposed_text_is_refused_before_the_guard(
    tmp_path: Path, setting: str | None,
) -> None:
    async with running_gateway(_config(tmp_path, setting)) as rt, Client(rt.front.server) as c:
        for text in DECOMPOSED:
            for args in ({"name": text}, {"name": "n", text: 1}):
                r = await c.call_tool("pay__tag", args)
                assert r.is_error and "NFC" in r.content[0].text, (text, r.content[0].text)
    assert arguments(tmp_path) == []


def test_as_sent_still_refuses_what_is_no_text() -> None:
    for value in ({"a": "x\ud800"}, {"x\udc00": 1}, {"a": ["\ud83d"]}):
        assert walk_value(value, 32, one_reading=True, composed=False)[0] is not None
    assert walk_value({"a": NFD_NAME, NFD_NAME: [NFD_NAME]}, 32, one_reading=True, composed=False)[0] is None


@pytest.mark.parametrize("wrong", [True, 1, "", "NFC", "as-sent", "asSent", "exact", None, ["as_sent"], {}])
def test_the_setting_takes_only_its_two_values_named_with_file_and_line(tmp_path: Path, wrong: Any) -> None:
    p = tmp_path / "cfg.json"
    p.write_text('{\n "mcpServers": {\n  "fs": {\n   "command": "x",\n   "argument_texts": '
                 + json.dumps(wrong) + '\n  }\n },\n "sentinel": {}\n}')
    with pytest.raises(ConfigError) as err:
        load_config(p)
    said = str(err.value)
    assert str(p) in said and "line 5" in said and "mcpServers.fs.argument_texts" in said, said


def test_the_setting_defaults_to_nfc(tmp_path: Path) -> None:
    for setting in (None, "nfc", "as_sent"):
        raw = pay_config(tmp_path)
        if setting is not None:
            raw["mcpServers"]["pay"]["argument_texts"] = setting
        config = parse_config(raw, base_dir=str(tmp_path))
        assert config.mcp_servers["pay"].argument_texts == (setting or "nfc")
