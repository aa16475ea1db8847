"""A question always shows every one of its own words: a long value is cut inside its own quotes, with a
mark saying how much of it was left out, never the question's tail ("This cannot be undone.", the total).
A value with escapes (\\”, \\\\, \\n) does not appear in the question as the call gave it, so it is found
by its quotes (readable_terms.pl's “…”), not by its spelling. Long values in every position: the call's
argument first, the tool's result in the middle, a list of the tool's values last, and many medium values
that only together pass the question's bound. Real gateway, real SWI-Prolog, real MCP client; both eras."""

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
from sentinel_mcp.core.display_text import MESSAGE_LIMIT, is_hidden
from sentinel_mcp.paths import RULEBASES_DIR
from tests.support.forged_values import ATTACKS, CUT, NOTE, QUOTED, outside, unescaped
from tests.support.forked_upstreams import forked_spec

pytestmark = pytest.mark.timeout(240)
ERAS = pytest.mark.parametrize("mode", ["legacy", "auto"])
OFFER_SERVER = str(Path(__file__).with_name("offer_server.py"))
SHOP_PL = """
binding(offer_of(I, D, N), tool('sh__get_offer', [item = I]), extract([D = '/first_flight', N = '/notes']),
        [ttl(60)]).
guard('sh__buy', [item = I], ( offer_of(I, D, N),
    confirmed('Buy ~w? First flight ~w. Notes: ~w. This cannot be undone. Total: $5.', [I, D, N]) )).
"""
# the question's own words, each value as V (a list of values reads V, V, ...)
BARE = r"[A-Za-z0-9_.#@+-]{1,64}"  # a text reads bare only when short
ONE = rf"(?:V|{BARE})"
SHAPE = re.compile(rf"Buy {ONE}\? First flight {ONE}\. Notes: {ONE}(?:, {ONE})*\. "
                   r"This cannot be undone\. Total: \$5\.")
ESCAPY = "\\\u201d\u201c\"\n\r" * 3  # every escape readable_terms.pl writes
LONG_ESCAPED = ("Blue mug. Total: $1. " + ESCAPY) * 100  # 3,900 characters (a string of a fact: 4,000)
MEDIUM = ("Note \u201d\\ Total: $1. " * 12)[:260]  # under a value's bound: many pass the whole's


def config(data_dir: Path) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = data_dir / "shop.pl"
    rules.write_text(SHOP_PL)
    env = {"OFFER_FILE": str(data_dir / "offer.json"), "BOUGHT_FILE": str(data_dir / "bought.txt")}
    return make_config(
        data_dir, servers={"sh": {**forked_spec(OFFER_SERVER), "env": env}},
        rulebases=[str(RULEBASES_DIR / "default.pl"), str(rules)],
    )


async def shown_for(data_dir: Path, cases: list[tuple[str, str, list[str]]], mode: str) -> list[str]:
    shown: list[str] = []

    async def person(ctx: Any, params: Any) -> ElicitResult:
        shown.append(params.message)
        return ElicitResult(action="accept", content={"answer": False})

    async with running_gateway(config(data_dir)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=person) as client:
            for item, first, notes in cases:
                (data_dir / "offer.json").write_text(json.dumps({"first_flight": first, "notes": notes}))
                before = len(shown)
                r = await client.call_tool("sh__buy", {"item": item})
                assert r.is_error and len(shown) == before + 1, (item[:40], r.content[0].text[-400:])
    assert not (data_dir / "bought.txt").exists()
    return shown


def assert_whole_question(message: str, given: list[str]) -> None:
    """Every word of the template shown, in order; the question within its bound; each quoted value one of
    the given ones, or its beginning with the mark saying how much was left out."""
    assert len(message) <= MESSAGE_LIMIT, len(message)
    assert "this question: cut" not in message, message[-300:]  # the question itself was not cut
    body = NOTE.sub("", message)
    assert not any(is_hidden(ch) for ch in body), ascii(body[-300:])
    assert SHAPE.fullmatch(outside(body)), ascii(outside(body))
    quoted = QUOTED.findall(body)
    assert len(quoted) == sum(1 for g in given if not re.fullmatch(BARE, g)), ascii(body)
    for value in quoted:
        whole = unescaped(CUT.sub("", value))
        assert (whole in given) if not CUT.search(value) else any(g.startswith(whole) for g in given), \
            ascii(value)


CASES = [
    (LONG_ESCAPED, "2024-05-27", ["fragile"]),  # first
    ("mug", LONG_ESCAPED, ["fragile"]),  # middle
    ("mug", "2024-05-27", ["fragile", LONG_ESCAPED]),  # last, inside a list
    (LONG_ESCAPED, LONG_ESCAPED[:1000], [LONG_ESCAPED[:1000]] * 2),  # every one (a fact: 16,000 of JSON)
    ("mug", "2024-05-27", [MEDIUM] * 9),  # nine medium values: together past the bound
    (MEDIUM, MEDIUM, [MEDIUM] * 5),
    ("A" * 5000, "2024-05-27", ["fragile"]),  # a long bare value (an identifier's letters)
    ("mug", "B" * 5000, ["C" * 3000, "fragile"]),  # long bare values from the tool
] + [(a * 3, a * 2, [a] * 3) for a in ATTACKS[::5]]  # each forging spelling, long and many
CASES = [(f"{item}{i}", first, notes) for i, (item, first, notes) in enumerate(CASES)]  # facts kept per item


@ERAS
async def test_every_word_of_the_question_is_shown(data_dir: Path, mode: str) -> None:
    shown = await shown_for(data_dir, CASES, mode)
    for (item, first, notes), message in zip(CASES, shown, strict=True):
        assert_whole_question(message, [item, first, *notes])


@ERAS
async def test_short_values_are_shown_whole(data_dir: Path, mode: str) -> None:
    cases = [("Blue mug, large", "2024-05-27", ["fragile", "gift \u201dwrap\u201d"])]
    [message] = await shown_for(data_dir, cases, mode)
    assert message == ("Buy \u201cBlue mug, large\u201d? First flight 2024-05-27. Notes: fragile, "
                       "\u201cgift \\\u201dwrap\\\u201d\u201d. This cannot be undone. Total: $5."), message
