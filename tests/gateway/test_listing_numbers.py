"""An upstream's listing holding a number JSON has no spelling for (``NaN``, ``Infinity``, an overflowing
``1e999``) in a tool's schemas or ``_meta`` is refused, naming the tool and where (upstream_listing.py).

Before, the readers took them: the gateway checked arguments against ``maximum: inf`` or ``enum: [1, nan]``
while every client was listed ``null`` there (the serializer's spelling), a schema that says something else
(``"maximum": null`` is no JSON Schema at all; ``null`` in an enum lets ``null`` through, in the client's
view). A real raw stdio upstream per spelling (``non_finite_schema_upstream.py``), the real gateway and
client, a well-behaved upstream served throughout."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterable

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from tests.gateway.helpers import make_config, toolbox_stdio
from tests.gateway.non_finite_schema_upstream import SCHEMAS
from tests.gateway.test_listing_bounds import wait_until

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]
WHY = "a number JSON has no spelling for"


def upstream(tools: str, table: str = "") -> dict:
    return {"command": sys.executable, "args": ["-m", "tests.gateway.non_finite_schema_upstream"],
            "cwd": str(ROOT), "env": {"TOOLS": tools, "TABLE": table}, "timeout": 10}


async def refused_at_connect(data_dir: Path, names: Iterable[str], why: str, table: str = "",
                             named: bool = True) -> None:
    """An upstream a name of ``table`` listing it, each refused, saying ``why`` (and the tool's name:
    ``named``); the others served."""
    names = list(names)
    servers = {f"s{i}": upstream(name, table) for i, name in enumerate(names)}
    config = make_config(data_dir, {**servers, "fine": upstream("", table), "tb": toolbox_stdio()})
    async with running_gateway(config, startup_wait=5.0) as rt:
        ups = rt.manager.upstreams
        for i, name in enumerate(names):
            up = ups[f"s{i}"]
            await wait_until(lambda up=up: up.listing_problem is not None)  # type: ignore[misc]
            assert up.state != "ready" and up.tools == {}, name
            assert why in (up.last_error or ""), (name, up.last_error)
            assert not named or repr(name) in (up.last_error or ""), (name, up.last_error)
            problems = rt.catalog_health.problems
            said = f"upstream s{i}: listing refused"
            assert any(p.startswith(said) and why in p and "not served" in p for p in problems), problems
        assert await ups["fine"].wait_ready(30) and ups["fine"].listing_problem is None
        assert await ups["tb"].wait_ready(30)
        async with Client(rt.front.server, mode="legacy") as c:
            listed = {t.name for t in (await c.list_tools()).tools}
            assert {"fine__ok", "tb__echo"} <= listed and not any(n.startswith("s") for n in listed), listed
            assert (await c.call_tool("tb__echo", {"text": "fine"})).content[0].text == "fine"
            r = await c.call_tool("fine__ok", {"n": 2.5})
            assert not r.is_error and r.content[0].text == "called ok", r


async def kept_after_change(data_dir: Path, names: Iterable[str], why: str, table: str = "") -> None:
    """``sicken`` lists every name of ``table``: the catalog before is kept until ``heal``."""
    async with running_gateway(make_config(data_dir, {"nf": upstream("", table)})) as rt:
        up = rt.manager.upstreams["nf"]
        assert await up.wait_ready(30)
        async with Client(rt.front.server, mode="legacy") as c:
            assert not (await c.call_tool("nf__sicken", {})).is_error
            await wait_until(lambda: up.listing_problem is not None)
            assert why in up.listing_problem and "the catalog before the change is kept" in up.listing_problem
            assert sorted(up.tools) == ["heal", "ok", "sicken"]
            listed = {t.name for t in (await c.list_tools()).tools}
            assert {"nf__ok", "nf__heal"} <= listed and not listed & {f"nf__{n}" for n in names}, listed
            assert not (await c.call_tool("nf__heal", {})).is_error
            await wait_until(lambda: up.listing_problem is None)
            await wait_until(lambda: up._relisting is not None and up._relisting.done())
            assert up.last_error is None and rt.catalog_health.problems == []


@pytest.mark.parametrize("lean", ["on", "off"])
async def test_a_listing_with_a_non_finite_number_is_refused_naming_the_tool(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch, lean: str) -> None:
    monkeypatch.setenv("SENTINEL_LEAN_UPSTREAM", lean)  # off: the SDK client's path
    await refused_at_connect(data_dir, SCHEMAS, WHY)


@pytest.mark.parametrize("lean", ["on", "off"])
async def test_a_non_finite_number_after_a_change_keeps_the_catalog_until_one_fits(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch, lean: str) -> None:
    monkeypatch.setenv("SENTINEL_LEAN_UPSTREAM", lean)
    await kept_after_change(data_dir, SCHEMAS, WHY)


def test_the_words_are_no_number_and_what_does_not_encode_is_walked() -> None:
    """Texts spelling the constants are listed (the fast look at the JSON only picks what to walk); a number
    beside a lone surrogate (which no JSON encoder takes) or in a tuple is still found."""
    from mcp.types import Tool

    from sentinel_mcp.gateway.upstream_listing import ListingRefused, _finite

    words = Tool(name="w", description='NaN, Infinity, -Infinity: "x": NaN]', input_schema={
        "type": "object", "properties": {"NaN": {"type": "number", "default": 1e308, "title": "Infinity"}}})
    _finite(words, "tools")
    for bad in (Tool(name="s\ud800", input_schema={"type": "object", "\ud800": float("inf")}),
                Tool(name="t", input_schema={"type": "object"}, _meta={"q": (1, float("-inf"))}),
                Tool(name="n", input_schema={"type": "object", "enum": [[[float("nan")]]]})):
        with pytest.raises(ListingRefused, match="no spelling for"):
            _finite(bad, "tools")
