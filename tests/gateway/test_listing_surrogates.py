"""An upstream's listing holding a lone surrogate (``\\ud800`` escaped in its JSON) anywhere in a tool
(description, title, a schema's property name, an enum value, ``_meta``, annotations, the output schema) is
refused as a listing: no client can be sent that text in UTF-8. Every reader of an upstream's messages refuses
it already (pydantic's JSON reader; the lean client's ``surrogate_free`` check): a real raw stdio upstream per
spelling (``non_finite_schema_upstream.py``, ``TABLE=surrogates``), the real gateway and client, a
well-behaved upstream served throughout. And the listing's own bound, behind them: an item that cannot be
written as JSON is a listing refused, naming it (it raised the serializer's error, no ``ListingRefused``)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any
from pathlib import Path

import pytest
from mcp.types import Prompt, Tool

from sentinel_mcp.gateway import upstream_listing
from tests.gateway.non_finite_schema_upstream import SURROGATES
from tests.gateway.test_listing_numbers import kept_after_change, refused_at_connect

pytestmark = pytest.mark.timeout(120)
WHY = "listing's answer could not be read"


async def test_a_listing_with_a_lone_surrogate_is_refused(data_dir: Path) -> None:
    await refused_at_connect(data_dir, SURROGATES, WHY, table="surrogates", named=False)


async def test_a_lone_surrogate_after_a_change_keeps_the_catalog_until_one_fits(data_dir: Path) -> None:
    await kept_after_change(data_dir, SURROGATES, WHY, table="surrogates")


def _pages(*items: Any, field_name: str = "tools") -> Any:
    async def list_page(cursor: str | None = None) -> Any:
        return SimpleNamespace(**{field_name: list(items)}, next_cursor=None)
    return list_page


@pytest.mark.parametrize("item", [
    Tool(name="t\ud800", inputSchema={}),
    Tool(name="ok", description="x\udfff", inputSchema={}),
    Tool(name="ok", inputSchema={"properties": {"\udc00": {"type": "string"}}}),
    Tool(name="ok", inputSchema={}, _meta={"k": ["\ud83d"]}),
], ids=["name", "description", "property", "meta"])
def test_an_item_that_cannot_be_written_is_a_listing_refused_naming_it(item: Tool) -> None:
    with pytest.raises(upstream_listing.ListingRefused, match="no UTF-8 spelling") as e:
        asyncio.run(upstream_listing._all_pages(_pages(Tool(name="fine", inputSchema={}), item), "tools"))
    assert repr(item.name[:40]) in str(e.value), e.value


def test_a_prompt_that_cannot_be_written_is_refused_too() -> None:
    with pytest.raises(upstream_listing.ListingRefused, match="prompts listing: 'p'"):
        asyncio.run(upstream_listing._all_pages(
            _pages(Prompt(name="p", description="\ud800"), field_name="prompts"), "prompts"))
