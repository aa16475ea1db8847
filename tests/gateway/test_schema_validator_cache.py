"""A catalog rebuild lists every tool anew (new ``Tool`` objects, the same schemas): the validators of their
input and output schemas are compiled once per schema, not again after every rebuild
(``gateway/schema_validators.py``), and the cache stays bounded. The real gateway, a real stdio upstream
whose tools declare output schemas, the real jsonschema compilation (counted)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core import outside_schema

from .helpers import make_config
from .output_schema_upstream import NUMBER

UPSTREAM = str(Path(__file__).with_name("output_schema_upstream.py"))


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each schema (by its JSON) was compiled."""
    counts: Counter[str] = Counter()
    real = outside_schema.validator

    def counting(schema: Any) -> Any:
        counts[json.dumps(schema, sort_keys=True)] += 1
        return real(schema)

    monkeypatch.setattr(outside_schema, "validator", counting)
    return counts


async def test_a_catalog_rebuild_compiles_no_schema_again(data_dir: Path, compiled: Counter[str]) -> None:
    servers = {"os": {"command": sys.executable, "args": [UPSTREAM]}}
    async with running_gateway(make_config(data_dir, servers=servers)) as rt:
        assert await rt.manager.upstreams["os"].wait_ready(20)
        async with Client(rt.front.server, mode="legacy") as c:
            for rebuild in range(3):
                before = rt.manager.catalog.route("os__fine")
                for name in ("os__fine", "os__wrong_type"):
                    r = await c.call_tool(name, {})
                    assert r.is_error == (name == "os__wrong_type"), r
                await rt.manager._catalog_changed(None)  # as a list_changed or a pins change does
                assert rt.manager.catalog.route("os__fine") is not before  # the tool listed anew
    number = json.dumps(NUMBER, sort_keys=True)
    assert compiled[number] == 1, compiled  # two tools, three rebuilds: one compilation
    assert compiled and max(compiled.values()) == 1, compiled  # their input schemas too


def test_the_cache_is_bounded_and_keeps_what_is_used() -> None:
    from sentinel_mcp.gateway.schema_validators import MAX_SCHEMA_BYTES, CompiledSchemas

    made: list[int] = []
    cache: CompiledSchemas[int] = CompiledSchemas(max_schemas=4)

    def schema(n: int) -> dict[str, Any]:
        return {"type": "object", "properties": {f"f{n}": {"type": "string"}}}

    for n in range(10):
        assert cache.get(schema(n), lambda n=n: made.append(n) or n) == n
        assert cache.get(schema(0), lambda: made.append(-1) or -1) == 0  # used: kept
    assert len(cache) == 4 and made == list(range(10))
    assert cache.get(schema(5), lambda: 55) == 55  # pushed out: compiled again
    # key order is part of the schema as written: never shared with a reordering
    assert cache.get({"properties": {"f0": {"type": "string"}}, "type": "object"}, lambda: 7) == 7
    huge = {"description": "x" * MAX_SCHEMA_BYTES}
    assert cache.get(huge, lambda: 1) == 1 and cache.get(huge, lambda: 2) == 2  # never kept
    assert cache.get({"bad": {1, 2}}, lambda: 3) == 3  # no JSON: compiled, not kept
