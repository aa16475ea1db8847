"""Size bounds count the UTF-8 bytes a value costs, not its characters (red team "rt-limits7").

An astral character (an emoji, a CJK extension ideograph) is one character and four bytes: a bound counted in
characters held, sent or stored four times what it says. Each bound here is met by the same text twice, once
in ASCII and once in 4-byte characters of the same character count: before, the 4-byte one passed where it
cost four times the bound; now both are measured alike, in bytes."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import pytest
from mcp.types import LoggingMessageNotificationParams, Tool

from sentinel_mcp.a2a import relayed_data
from sentinel_mcp.a2a.bridge import relayed_reply
from sentinel_mcp.core.utf8_text import utf8_prefix, utf8_size
from sentinel_mcp.gateway import tool_pins, upstream_listing, upstream_relays

ASTRAL = "\U0001f600"  # one character, four bytes
SPELLINGS = {"ascii": "a", "two bytes": "\u00e9", "three bytes": "\u4e2d", "four bytes": ASTRAL,
             "lone surrogate": "\ud800"}


def wire(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_the_one_count_and_the_one_cut(spelling: str) -> None:
    ch = SPELLINGS[spelling]
    text = ch * 1000
    size = len(ch.encode("utf-8", "surrogatepass"))
    assert utf8_size(text) == 1000 * size
    for limit in (0, 1, 2, 3, 5, 999, 1001, 4001):
        cut = utf8_prefix(text, limit)
        assert utf8_size(cut) <= limit and text.startswith(cut), (limit, len(cut))
        assert utf8_size(cut) > min(limit, utf8_size(text)) - size, (limit, len(cut))  # not a character short


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_relayed_data_part_is_bounded_in_bytes(spelling: str) -> None:
    ch = SPELLINGS[spelling]
    value = {f"k{i}": ch * 1500 for i in range(60)}
    data = relayed_data.relayed_data(value, "peer")
    # keys, markers and JSON punctuation beside the budget: within a tenth of it
    assert wire(data) <= relayed_data.MAX_BYTES * 1.1, (spelling, wire(data))


def test_a_pinned_definition_is_kept_by_its_bytes() -> None:
    under = tool_pins.MAX_KEPT_DEFINITION // 4 + 1000  # characters: under the bound, bytes: over it
    for ch, kept in (("a", True), (ASTRAL, False)):
        definition = {"description": ch * under}
        assert (tool_pins._kept(definition) is not None) is kept, (ch, kept)


def test_a_servers_kept_definitions_share_counts_bytes() -> None:
    shares = tool_pins._Shares({}, {}, {"srv__t": "srv"}, {})
    big = {"description": ASTRAL * (tool_pins.MAX_KEPT_DEFINITION // 8)}
    taken = 0
    while shares.keep("srv__t", big) is not None:
        taken += 1
    assert taken * wire(big) <= tool_pins.MAX_KEPT_PER_SERVER, taken


async def _listing(ch: str, pages: int) -> list[Any] | str:
    per_page = upstream_listing.MAX_LISTING_BYTES // pages // 4 + 2000  # chars: each page a quarter...

    async def list_page(cursor: str | None = None) -> Any:
        at = int(cursor or 0)
        return SimpleNamespace(tools=[Tool(name=f"t{at}", description=ch * per_page, inputSchema={})],
                               next_cursor=str(at + 1) if at + 1 < pages else None)

    try:
        return await upstream_listing._all_pages(list_page, "tools")
    except upstream_listing.ListingRefused as e:
        return str(e)


def test_a_listing_is_bounded_by_its_bytes() -> None:
    # the same number of characters: in ASCII a quarter of the bound, in 4-byte characters past it
    assert isinstance(asyncio.run(_listing("a", 4)), list)
    refused = asyncio.run(_listing(ASTRAL, 4))
    assert isinstance(refused, str) and "bytes" in refused, refused


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_relayed_log_line_is_bounded_in_bytes(spelling: str) -> None:
    ch = SPELLINGS[spelling]
    for data in (ch * 20_000, {"line": ch * 20_000}):
        params = LoggingMessageNotificationParams(level="info", data=data, logger=ch * 400)
        out = upstream_relays._bounded_log(params)
        text = out.data if isinstance(out.data, str) else json.dumps(out.data, ensure_ascii=False)
        assert utf8_size(text) <= upstream_relays.LOG_DATA_BYTES, (spelling, utf8_size(text))
        assert out.logger is not None and utf8_size(out.logger) <= upstream_relays.LOGGER_BYTES


def test_a_relayed_reply_is_measured_in_bytes_not_escapes() -> None:
    """``json.dumps`` escapes an astral character as twelve ASCII characters: the bound said bytes and
    counted escapes, refusing an answer of a third of the bound as past it."""
    limit = 40_000
    fits = {"parts": [{"text": ASTRAL * (limit // 4 - 100)}]}
    over = {"parts": [{"text": ASTRAL * (limit // 4 + 100)}]}
    assert relayed_reply(fits, limit)["state"] != "invalid"
    assert relayed_reply(over, limit)["state"] == "invalid"


@pytest.mark.parametrize("leaf", [1, 1.5, True, None, -(2**52)])
def test_a_relayed_data_parts_numbers_and_nesting_count_too(leaf: Any) -> None:
    """Only keys and strings were charged: 64 x 64 x 24 numbers (within the wire's 100,000 values) were
    relayed whole, past the budget many times over."""
    value = [[[leaf] * 24 for _ in range(64)] for _ in range(64)]
    data = relayed_data.relayed_data(value, "peer")
    assert wire(data) <= relayed_data.MAX_BYTES * 1.1, (leaf, wire(data))
    assert relayed_data.CUT in json.dumps(data)  # it says it cut
