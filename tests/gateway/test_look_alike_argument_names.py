"""An argument name that differs from a declared one only by an invisible, direction-changing or look-alike
character: ``{"amount": 50, "currency": "USD", "currency\\u200b": "BTC"}``. The guard reads ``currency``
(USD, any amount); an upstream that strips invisible characters, normalizes or matches names loosely acts on
BTC. With ``undeclared_arguments: "pass"`` such a key was forwarded as sent. A name that reads as a declared
name (NFKC, default-ignorable characters removed, UTS #39's confusable skeleton) or as another key of the same
object is refused, whatever the upstream's setting; honest names, ASCII or not, still pass."""

from __future__ import annotations

from pathlib import Path
import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.core.display_text import is_hidden
from sentinel_mcp.gateway.key_spellings import key_spelling_problem
from sentinel_mcp.gateway.look_alike_keys import MAX_LOOKED_CHARS

from .pay_probe import arguments, pay_config

pytestmark = pytest.mark.timeout(180)

# each reads as "currency" to a person and to a reader that drops what it cannot see
CURRENCY = {
    "a zero-width space after": "currency\u200b",
    "a zero-width space before": "\u200bcurrency",
    "a soft hyphen inside": "curr\u00adency",
    "a word joiner": "curr\u2060ency",
    "a zero-width joiner": "cur\u200drency",
    "a zero-width non-joiner": "cur\u200crency",
    "a right-to-left override": "currency\u202e",
    "a bidi isolate": "\u2067currency\u2069",
    "a left-to-right mark": "currency\u200e",
    "a variation selector": "currency\ufe0f",
    "a tag character": "currency\U000e0001",
    "a combining grapheme joiner": "curr\u034fency",
    "a Mongolian vowel separator": "currency\u180e",
    "a BOM inside": "curr\ufeffency",
    "a Cyrillic es": "\u0441urrency",
    "a Cyrillic ie": "curr\u0435ncy",
    "a Cyrillic u": "currenc\u0443",
    "a Greek lunate sigma": "curren\u03f2y",
    "a Greek capital lunate sigma": "CURREN\u03f9Y",
    "a Greek lunate sigma first": "\u03f2urrency",
    "Cyrillic es and ie": "\u0441urr\u0435n\u0441y",
    "a combining dot below": "curre\u0323ncy",
    "a Hangul filler": "currency\u3164",
}
# the spellings that differ only by what no one sees (the rest: look-alike letters and marks)
INVISIBLE = [k for k in CURRENCY.values() if k.isascii() is False and
             k.encode("ascii", "ignore").decode() == "currency" and "\u0323" not in k]
# the same tricks on a nested object's declared names
EXPRESS = ["express\u200b", "\u2067express\u2069", "expr\u00adess", "\u0435xpress", "expr\u0435ss",
           "express\ufe0f", "exp\u200dress", "express\U000e0020"]
NOTE = ["note\u200b", "n\u043ete", "not\u0435", "no\u2060te", "note\u202e", "n\u00adote"]
HONEST = {"evil": "BTC", "n\u00famero": 1, "w\u00e4hrung": "EUR", "\u91d1\u984d": 3,
          "\u0441\u0443\u043c\u043c\u0430": 4}
SHIP = {"order": "o", "options": {"express": False, "n\u00famero": 1}}


@pytest.mark.parametrize("key", CURRENCY.values(), ids=CURRENCY.keys())
def test_a_name_reading_as_a_declared_one_is_refused(key: str) -> None:
    schema = {"type": "object", "properties": {"amount": {}, "currency": {}}, "additionalProperties": True}
    assert key_spelling_problem(schema, {"amount": 50, key: "BTC"}) is not None
    assert key_spelling_problem(schema, {"amount": 50, "currency": "USD", key: "BTC"}) is not None
    if key in INVISIBLE:  # two keys of one object, at any level, that a reader dropping them reads as one
        assert key_spelling_problem(schema, {"amount": 1, "x": {"currency": "USD", key: "BTC"}}) is not None
        assert key_spelling_problem(schema, {"amount": 1, "x": [{key: "BTC", "currency": "USD"}]}) is not None


def test_honest_names_are_kept() -> None:
    schema = {"type": "object", "properties": {"amount": {}, "currency": {}, "na\u00efve": {}, "naive": {}}}
    assert key_spelling_problem(schema, {"amount": 5, "currency": "USD", **HONEST}) is None
    # a schema that declares two look-alike names (its author's choice) is taken at its word
    assert key_spelling_problem(schema, {"na\u00efve": 1, "naive": 2}) is None
    # ASCII names that a skeleton would join (l and 1, rn and m) are distinct to every reader: kept
    plain = {"type": "object", "properties": {"item_1": {}, "item_l": {}, "arn": {}, "am": {}}}
    assert key_spelling_problem(plain, {"item_1": 1, "item_l": 2, "arn": 3, "am": 4}) is None
    assert key_spelling_problem({}, {"x": {"item_1": 1, "item_l": 2}}) is None


@pytest.mark.parametrize("setting", ["pass", "drop", "refuse"])
async def test_a_look_alike_name_never_reaches_the_upstream(tmp_path: Path, setting: str) -> None:
    config = parse_config(pay_config(tmp_path, undeclared=setting), base_dir=str(tmp_path))
    async with running_gateway(config) as rt, Client(rt.front.server) as c:
        for key in CURRENCY.values():
            for args in ({"amount": 50, "currency": "USD", key: "BTC"}, {"amount": 50, key: "USD"}):
                r = await c.call_tool("pay__transfer", args)
                assert r.is_error, (setting, key, r.content[0].text)
        # a nested object's declared name: its default fills the real name, the look-alike rides along
        for key in EXPRESS:
            r = await c.call_tool("pay__ship", {"order": "o", "options": {"express": False, key: True}})
            assert r.is_error, (setting, key, r.content[0].text)
        for key in NOTE:
            r = await c.call_tool("pay__ship", {"order": "o", "options": {key: "x"}})
            assert r.is_error, (setting, key, r.content[0].text)
        assert arguments(tmp_path) == []
        if setting == "pass":
            r = await c.call_tool("pay__transfer", {"amount": 5, "currency": "USD", **HONEST})
            assert not r.is_error, r.content[0].text
            r = await c.call_tool("pay__ship", SHIP)
            assert not r.is_error, r.content[0].text
    if setting == "pass":
        assert arguments(tmp_path) == [{"amount": 5, "currency": "USD", **HONEST},
                                       {**SHIP, "later": None}]


async def test_the_names_compared_per_call_are_bounded(tmp_path: Path) -> None:
    """A skeleton costs its name's length (~7.5 us a character under load): a call of many undeclared names
    outside ASCII is compared up to ``MAX_LOOKED_CHARS`` characters, then refused, never compared for long."""
    fits = {f"n\u00fam{i:04}": i for i in range(MAX_LOOKED_CHARS // 16)}  # 7 characters each
    past = {f"n\u00fam{i:05}": i for i in range(MAX_LOOKED_CHARS // 8 + 1)}  # 8 characters each
    config = parse_config(pay_config(tmp_path, undeclared="pass"), base_dir=str(tmp_path))
    async with running_gateway(config) as rt, Client(rt.front.server) as c:
        r = await c.call_tool("pay__transfer", {"amount": 5, "currency": "USD", **past})
        said = r.content[0].text
        assert r.is_error and f"more than {MAX_LOOKED_CHARS} characters" in said, said
        r = await c.call_tool("pay__transfer", {"amount": 5, "currency": "USD", **fits})
        assert not r.is_error, r.content[0].text
    assert arguments(tmp_path) == [{"amount": 5, "currency": "USD", **fits}]


async def test_a_refusal_shows_each_hidden_character_once(tmp_path: Path) -> None:
    """The refusal names the key as sent, each hidden character shown once as ``⟨U+XXXX⟩``: the key's marked
    text, built into a plain string, was shown again and read ``currency⟨U+27E8⟩U+200B⟨U+27E9⟩``."""
    hidden = {k: [c for c in k if is_hidden(c)] for k in CURRENCY.values() if any(is_hidden(c) for c in k)}
    assert len(hidden) >= 10
    config = parse_config(pay_config(tmp_path, undeclared="pass"), base_dir=str(tmp_path))
    async with running_gateway(config) as rt, Client(rt.front.server) as c:
        said = []
        for key in hidden:
            r = await c.call_tool("pay__transfer", {"amount": 50, key: "USD"})
            said.append(r.content[0].text)
        for key in EXPRESS:
            r = await c.call_tool("pay__ship", {"order": "o", "options": {"express": False, key: True}})
            said.append(r.content[0].text)
    for text in said:
        assert "U+27E8" not in text and "U+27E9" not in text, text
    for text, chars in zip(said, hidden.values()):
        for ch in chars:
            assert text.count(f"⟨U+{ord(ch):04X}⟩") == chars.count(ch), text
    assert arguments(tmp_path) == []
