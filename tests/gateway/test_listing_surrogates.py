"""An upstream's listing holding a lone surrogate (``\\ud800`` escaped in its JSON) anywhere in a tool
(description, title, a schema's property name, an enum value, ``_meta``, annotations, the output schema) is
refused as a listing: no client can be sent that text in UTF-8. Every reader of an upstream's messages refuses
it already (pydantic's JSON reader; the lean client's ``surrogate_free`` check): a real raw stdio upstream per
spelling (``non_finite_schema_upstream.py``, ``TABLE=surrogates``), the real gateway and client, a
well-behaved upstream served throughout. And the listing's own bound, behind them: an item that cannot be
written as JSON is a listing refused, naming it (it raised the serializer's error, no ``ListingRefused``)."""

from __future__ import annotations

import asyncio
import sys
from types import SimpleNamespace
from typing import Any
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import Prompt, Tool

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway import upstream_listing
from tests.gateway.helpers import make_config, toolbox_stdio
from tests.gateway.non_finite_schema_upstream import SURROGATES
from tests.gateway.test_listing_bounds import wait_until

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]
WHY = "listing's answer could not be read"


def upstream(tools: str) -> dict:
    return {"command": sys.executable, "args": ["-m", "tests.gateway.non_finite_schema_upstream"],
            "cwd": str(ROOT), "env": {"TOOLS": tools, "TABLE": "surrogates"}, "timeout": 10}


async def test_a_listing_with_a_lone_surrogate_is_refused(data_dir: Path) -> None:
    servers = {f"s{i}": upstream(name) for i, name in enumerate(SURROGATES)}
    config = make_config(data_dir, {**servers, "fine": upstream(""), "tb": toolbox_stdio()})
    async with running_gateway(config, startup_wait=5.0) as rt:
        ups = rt.manager.upstreams
        for i, name in enumerate(SURROGATES):
            up = ups[f"s{i}"]
            await wait_until(lambda up=up: up.listing_problem is not None)  # type: ignore[misc]
            assert up.state != "ready" and up.tools == {}, name
            assert WHY in (up.last_error or ""), (name, up.last_error)
            problems = rt.catalog_health.problems
            said = f"upstream s{i}: listing refused"
            assert any(p.startswith(said) and WHY in p and "not served" in p for p in problems), problems
        assert await ups["fine"].wait_ready(30) and ups["fine"].listing_problem is None
        assert await ups["tb"].wait_ready(30)
        async with Client(rt.front.server, mode="legacy") as c:
            listed = {t.name for t in (await c.list_tools()).tools}
            assert {"fine__ok", "tb__echo"} <= listed and not any(n.startswith("s") for n in listed), listed
            assert (await c.call_tool("tb__echo", {"text": "fine"})).content[0].text == "fine"


async def test_a_lone_surrogate_after_a_change_keeps_the_catalog_until_one_fits(data_dir: Path) -> None:
    async with running_gateway(make_config(data_dir, {"ls": upstream("")})) as rt:
        up = rt.manager.upstreams["ls"]
        assert await up.wait_ready(30)
        async with Client(rt.front.server, mode="legacy") as c:
            assert not (await c.call_tool("ls__sicken", {})).is_error
            await wait_until(lambda: up.listing_problem is not None)
            assert WHY in up.listing_problem and "the catalog before the change is kept" in up.listing_problem
            assert sorted(up.tools) == ["heal", "ok", "sicken"]
            listed = {t.name for t in (await c.list_tools()).tools}
            assert {"ls__ok", "ls__heal"} <= listed and not listed & {f"ls__{n}" for n in SURROGATES}, listed
            assert not (await c.call_tool("ls__heal", {})).is_error
            await wait_until(lambda: up.listing_problem is None)


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
