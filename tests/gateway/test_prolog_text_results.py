"""A bound read tool's result is data, whatever Prolog it spells. Through the real gateway, a real rulebase
and a real upstream subprocess (``prolog_text_results_server.py``): the owner a read answers in Prolog's
syntax (quotes ending an atom, a neck, a goal, comments, operators, a variable's name, 0'c, backquotes,
lists, braces, a deep term) or as a look-alike of "ann" never lets the guard ``doc_owner(D, U),
current_user(U)`` through for ann, the fact it becomes holds the upstream's text exactly (no reading of it as
Prolog), and members that spell facts (``current_user(mallory)``, another document's owner) write none.
Both ways a result becomes a term: built in C, and the JSON text read by Prolog (``SENTINEL_PROLOG_CALL``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, AsyncIterator

import pytest
import pytest_asyncio
from mcp import Client
from tests.support.held_context import held

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.policy import prolog_call

from .prolog_text_results_server import OWNERS

pytestmark = [pytest.mark.timeout(180), pytest.mark.asyncio(loop_scope="module")]
SERVER = str(Path(__file__).with_name("prolog_text_results_server.py"))
RULES = """
binding(doc_owner(D, O), tool('dc__get_doc', [doc_id = D]), extract([O = '/owner']), [ttl(60)]).
read_only('dc__get_doc').
seed(current_user(ann)).
guard('dc__publish', [doc_id = D], ( doc_owner(D, U), current_user(U) )).
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["native", "ctypes"])
async def gateway(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
                  ) -> AsyncIterator[Any]:
    was = prolog_call.native_in_use()
    if request.param == "native":  # built by `make setup` (test_prolog_call_native.py asserts it so too)
        assert prolog_call.use_native(True), "the guard's C function is not built"
    if request.param == "ctypes":
        prolog_call.use_native(False)
    tmp = tmp_path_factory.mktemp("prolog_text_results")
    rules = tmp / "docs.pl"
    rules.write_text(RULES)
    config = parse_config({
        "mcpServers": {"dc": {"command": sys.executable, "args": [SERVER]}},
        "sentinel": {"rulebases": [str(rules)], "builtins": ["sentinel"], "data_dir": str(tmp / "state")},
    }, source="<test>", base_dir=str(tmp))
    try:
        async for rt in held(running_gateway(config)):
            yield rt
    finally:
        prolog_call.use_native(was)


def data(result: Any) -> dict[str, Any]:
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def query(c: Client, goal: str) -> list[dict[str, Any]]:
    r = await c.call_tool("sentinel__sentinel_query", {"goal": goal})
    out = data(r)
    assert not r.is_error and out["status"] in ("proved", "failed"), (goal, out)
    return [s["bindings"] for s in out.get("solutions") or []]


async def test_ann_owns_her_document_and_may_publish_it(gateway: Any) -> None:
    async with Client(gateway.front.server) as c:
        r = await c.call_tool("dc__publish", {"doc_id": "d0"})
        assert not r.is_error and r.content[0].text == "PUBLISHED d0", r.content[0].text
        assert await query(c, "doc_owner(d0, O)") == [{"O": "ann"}]


@pytest.mark.parametrize("i", range(1, len(OWNERS)))
async def test_an_owner_spelled_in_prolog_is_that_text_and_never_ann(gateway: Any, i: int) -> None:
    async with Client(gateway.front.server) as c:
        r = await c.call_tool("dc__publish", {"doc_id": f"d{i}"})
        assert r.is_error and "PUBLISHED" not in r.content[0].text, (OWNERS[i], r.content[0].text)
        # the fact holds the upstream's text as it was sent, one fact, of that document only
        assert await query(c, f"doc_owner(d{i}, O)") == [{"O": OWNERS[i]}]
        assert await query(c, f"doc_owner(D, ann), D == d{i}") == []
        # the members spelling facts wrote none: the seed is the only current user
        assert await query(c, "current_user(U)") == [{"U": "ann"}]
