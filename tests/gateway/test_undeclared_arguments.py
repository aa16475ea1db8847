"""An argument the tool's schema does not declare is invisible to a guard written against the schema, yet an
upstream may act on it (``**kwargs``, pydantic ``extra="allow"``, a JS server spreading the object). Such a
key is refused, at any level of an object whose properties the schema lists, naming the key; a key
``additionalProperties`` or ``patternProperties`` admits is declared and forwarded; an object declared
free-form (``{"type": "object"}``) takes anything. Per upstream, ``undeclared_arguments`` drops or passes
them instead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import ConfigError, parse_config

from .pay_probe import arguments, pay_config

pytestmark = pytest.mark.timeout(180)
MODERN = "2026-07-28"
# keys no schema declares, in many spellings (near names, JS prototype keys, an empty key, a NUL, padding)
EXTRA_KEYS = ["evil", "__proto__", "constructor", "", "amount ", " amount", "amoun", "amount\u0000",
              "currency\u200b", "toString", "$where", "amount.x"]


async def _call(c: Client, name: str, args: dict[str, Any]) -> tuple[bool, str]:
    r = await c.call_tool(name, args)
    return bool(r.is_error), r.content[0].text if r.content else ""


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_undeclared_keys_are_refused_at_every_level(tmp_path: Path, mode: str) -> None:
    config = parse_config(pay_config(tmp_path), base_dir=str(tmp_path))
    async with running_gateway(config) as rt, Client(rt.front.server, mode=mode) as c:
        for key in EXTRA_KEYS:
            refused, text = await _call(c, "pay__transfer", {"amount": 5, "currency": "USD", key: "BTC"})
            # currency\u200b reads as the declared currency: refused as that (test_look_alike_argument_names)
            assert refused and ("not one the tool declares" in text or "reads as the declared" in text), (
                key, text)
            refused, text = await _call(c, "pay__ship", {"order": "o", "options": {"express": False, key: 1}})
            assert refused and "options/" in text, (key, text)
            refused, text = await _call(c, "pay__ship", {"order": "o", "options": {"express": False},
                                                         "items": [{"sku": "a", "qty": 1, key: 1}]})
            assert refused and "items/0/" in text, (key, text)
            refused, text = await _call(c, "pay__none", {key: 1})
            assert refused, (key, text)
            refused, text = await _call(c, "pay__pattern", {"name": "n", key: "s"})
            assert refused, (key, text)
        refused, text = await _call(c, "pay__transfer", {"amount": 5, "\u202eevil": 1})
        assert refused and "\u202e" not in text, text  # the key is named safely
        assert arguments(tmp_path) == []
        # declared by the schema: additionalProperties true or a schema, a pattern, a free-form object
        for name, args in (("pay__tag", {"name": "n", "colour": {"any": 1}}),
                           ("pay__label", {"name": "n", "k": "v"}),
                           ("pay__pattern", {"name": "n", "x-k": "v"}), ("pay__free", {"anything": [1]}),
                           ("pay__none", {})):
            refused, text = await _call(c, name, args)
            assert not refused, (name, text)
        refused, text = await _call(c, "pay__label", {"name": "n", "k": 1})  # its schema refuses the value
        assert refused, text
    assert arguments(tmp_path) == [{"name": "n", "colour": {"any": 1}}, {"name": "n", "k": "v"},
                                   {"name": "n", "x-k": "v"}, {"anything": [1]}, {}]


@pytest.mark.parametrize(("setting", "expected"), [
    ("drop", {"amount": 5, "currency": "USD"}),
    ("pass", {"amount": 5, "currency": "USD", "evil": "BTC"}),
])
async def test_an_upstream_may_have_undeclared_keys_dropped_or_passed(
    tmp_path: Path, setting: str, expected: dict[str, Any]
) -> None:
    config = parse_config(pay_config(tmp_path, undeclared=setting), base_dir=str(tmp_path))
    async with running_gateway(config) as rt, Client(rt.front.server) as c:
        refused, text = await _call(c, "pay__transfer", {"amount": 5, "currency": "USD", "evil": "BTC"})
        assert not refused, text
    assert arguments(tmp_path) == [expected]


def test_the_setting_takes_only_its_three_values(tmp_path: Path) -> None:
    for wrong in ("allow", "", True, None, ["drop"]):
        raw = pay_config(tmp_path)
        raw["mcpServers"]["pay"]["undeclared_arguments"] = wrong
        with pytest.raises(ConfigError):
            parse_config(raw, base_dir=str(tmp_path))
