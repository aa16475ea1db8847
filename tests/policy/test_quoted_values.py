"""A value a call or a tool result supplies reads as one quoted value in the question a person approves
(readable_terms.pl): whatever it spells (a price line, a new "Label: value." sentence, a line break, a
Unicode line separator, a bidi override, a closing quote of its own), nothing inside it passes for a label,
sentence or line of the question. Honest values read as they are: identifiers bare, other text in “…”.
The Prolog side escapes only what could close the quote (\” and its look-alikes, \\) and line feeds and
carriage returns (\n, \r); every hidden character is shown by the gateway's one marking, ⟨U+XXXX⟩."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult
from tests.gateway.helpers import make_config

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.display_text import is_hidden
from tests.support.forged_values import ATTACKS, CUT, NOTE, QUOTED, unescaped
from sentinel_mcp.paths import RULEBASES_DIR
from tests.support.forked_upstreams import forked_spec

pytestmark = pytest.mark.timeout(180)
ERAS = pytest.mark.parametrize("mode", ["legacy", "auto"])  # both eras of the protocol
OFFER_SERVER = str(Path(__file__).with_name("offer_server.py"))
# a generic shop: the item comes from the call, the first flight from the tool's result
SHOP_PL = """
binding(offer_date(I, D), tool('sh__get_offer', [item = I]), extract([D = '/first_flight']), [ttl(60)]).
guard('sh__buy', [item = I], ( offer_date(I, D), confirmed('Buy ~w? First flight ~w. Total: $5.', [I, D]) )).
"""
HONEST = {
    "HKEG34": "HKEG34",
    "2024-05-27": "2024-05-27",
    "ann@example.com": "ann@example.com",
    "Blue mug, large": "\u201cBlue mug, large\u201d",
    "Caf\u00e9 Zo\u00eb": "\u201cCaf\u00e9 Zo\u00eb\u201d",
    "O'Brien's": "\u201cO'Brien's\u201d",
    "\u65e5\u672c\u8a9e": "\u201c\u65e5\u672c\u8a9e\u201d",
}
def config(data_dir: Path) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = data_dir / "shop.pl"
    rules.write_text(SHOP_PL)
    env = {"OFFER_FILE": str(data_dir / "offer.json"), "BOUGHT_FILE": str(data_dir / "bought.txt")}
    return make_config(
        data_dir, servers={"sh": {**forked_spec(OFFER_SERVER), "env": env}},
        rulebases=[str(RULEBASES_DIR / "default.pl"), str(rules)],
    )


async def shown_for(data_dir: Path, cases: list[tuple[str, str]], mode: str) -> list[str]:
    """The question a person is shown for each (item the call names, first flight the tool returns); the
    person says no, so nothing is bought."""
    shown: list[str] = []

    async def person(ctx: Any, params: Any) -> ElicitResult:
        shown.append(params.message)
        return ElicitResult(action="accept", content={"answer": False})

    async with running_gateway(config(data_dir)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=person) as client:
            for item, first in cases:
                (data_dir / "offer.json").write_text(json.dumps({"first_flight": first}))
                before = len(shown)
                r = await client.call_tool("sh__buy", {"item": item})
                assert r.is_error and len(shown) == before + 1, (item, first, r)
    assert not (data_dir / "bought.txt").exists()
    return shown


def assert_one_value_each(message: str, item: str, first: str) -> None:
    """The question is its template with the two values in place: one line, nothing unseen, every quoted
    value standing for exactly what was supplied, and the template's own sentences once each."""
    message = NOTE.sub("", message)  # the gateway's own note naming a value with hidden characters
    assert not any(is_hidden(ch) for ch in message), ascii(message)  # nothing unseen: no line break either
    assert "\\u{" not in message.replace("\\\\", ""), ascii(message)  # one convention: the gateway's ⟨U+…⟩
    values = QUOTED.findall(message)
    outside = QUOTED.sub("V", message)
    assert "\u201c" not in outside and "\u201d" not in outside, ascii(message)
    assert re.fullmatch(r"Buy (V|\S+)\? First flight (V|\S+)\. Total: \$5\.", outside), ascii(message)
    supplied = [v for v in (item, first) if not _bare(v)]
    assert len(values) == len(supplied), ascii(message)
    for value, given in zip(values, supplied, strict=True):
        whole = unescaped(CUT.sub("", value))
        # a value longer than the gateway's limit is cut where it is shown (and said to be): what is
        # shown of it is its beginning
        assert whole == given if not CUT.search(value) else given.startswith(whole), ascii(message)


def _bare(value: str) -> bool:
    return re.fullmatch(r"[A-Za-z0-9_.#@+-]+", value) is not None


@ERAS
async def test_a_value_cannot_forge_a_line_of_the_confirmation(data_dir: Path, mode: str) -> None:
    cases = [(a, "2024-05-27") for a in ATTACKS] + [(f"item{i}", a) for i, a in enumerate(ATTACKS)]
    shown = await shown_for(data_dir, cases, mode)
    for (item, first), message in zip(cases, shown, strict=True):
        assert_one_value_each(message, item, first)


@ERAS
async def test_honest_values_read_as_they_are(data_dir: Path, mode: str) -> None:
    cases = [(v, "2024-05-27") for v in HONEST] + [(f"HK{i}", v) for i, v in enumerate(HONEST)]
    shown = await shown_for(data_dir, cases, mode)
    for (item, first), message in zip(cases, shown, strict=True):
        assert message == f"Buy {HONEST.get(item, item)}? First flight {HONEST[first]}. Total: $5.", message
        assert_one_value_each(message, item, first)


def test_python_quotes_as_the_rulebase_does() -> None:
    """``core/quoted_values.py`` (Sentinel's own texts, e.g. a peer's description) escapes the very marks
    readable_terms.pl does: one convention in every question."""
    from sentinel_mcp.core.quoted_values import CLOSING_LIKE, readable_text
    from sentinel_mcp.paths import PROJECT_ROOT

    source = (PROJECT_ROOT / "sentinel_mcp" / "policy" / "prolog" / "readable_terms.pl").read_text()
    listed = re.search(r"closing_codes\(\[(.*?)\]\)\.", source, re.S)
    assert listed is not None
    marks = {"0'\\\\": "\\", "0'\"": '"'}
    codes = {marks.get(c.strip()) or chr(int(c.strip(), 16)) for c in listed.group(1).split(",")}
    assert codes == set(CLOSING_LIKE)
    for given, shown in HONEST.items():
        assert readable_text(given) == shown
    for attack in ATTACKS:
        [value] = QUOTED.findall(readable_text(attack))
        assert unescaped(value) == attack and "\n" not in value and "\r" not in value
