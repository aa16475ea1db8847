"""Names given after a clash never take another tool's name: the catalog's names are unique by construction
(the hash suffix grows until no other tool has, wants, or is governed under that name), deterministic (the
same catalog, in any order, gives the same names), and every tool stays reachable by exactly one name that
routes to its own identity (which the guard decides)."""

from __future__ import annotations

import hashlib
import itertools
import sys
from pathlib import Path

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from tests.gateway.catalog_upstream import StandInUpstream as _Up
from sentinel_mcp.gateway.catalog import Catalog, identity_of


def _suffixed(server: str, tool: str, width: int = 6) -> str:
    """The name a clash gave ``tool`` of ``server`` (prefix ""): its name, ``_``, a hash of its identity."""
    return f"{tool}_{hashlib.sha1(f'{server}:{tool}'.encode()).hexdigest()[:width]}"


def _upstreams() -> list[_Up]:
    # every server (prefix "") offers "search" and "find": all but the alphabetically first clash; other
    # servers offer tools literally named like those suffixed names (and their longer spellings), before
    # and after the clashing servers in name order
    clashing = [f"s{i}" for i in range(1, 7)]
    literal = sorted({_suffixed(s, t, w) for s in clashing for t in ("search", "find") for w in (6, 8)})
    return [
        *(_Up(s, ["search", "find"], prompts=["search"]) for s in clashing),
        _Up("a0", literal[: len(literal) // 2], prompts=[_suffixed("s2", "search")]),
        _Up("z9", literal[len(literal) // 2:], prompts=[_suffixed("s3", "search")]),
        _Up("m5", ["search_", "search__", "find_0"]),
    ]


def _check(cat: Catalog, ups: list[_Up]) -> dict[str, str]:
    identities = {identity_of(u.name, t) for u in ups for t in u.tools}
    assert not cat.conflicts, cat.conflicts
    # one name a tool, one tool a name: no tool hidden behind another's name
    assert {r.identity for r in cat.tools.values()} == identities
    assert len(cat.tools) == len(identities) == len(cat.identities)
    for name, route in cat.tools.items():
        assert route.exposed.name == name and len(name) <= 64
        assert cat.identities[route.identity] == name
        assert cat.route(route.identity, by_identity=True) is route  # the guard's view: the same tool
    # a tool literally named like a suffixed name keeps its own name (nothing else wants it)
    for u in ups:
        for t in u.tools:
            if u.name in ("a0", "z9", "m5"):
                assert cat.tools[t].identity == identity_of(u.name, t)
    prompts = {(u.name, p.name) for u in ups for p in u.prompts}
    assert {(r.upstream, r.prompt) for r in cat.prompts.values()} == prompts
    return {r.identity: n for n, r in cat.tools.items()}


def test_suffixed_names_never_take_another_tools_name_and_are_deterministic():
    ups = _upstreams()
    first = Catalog()
    first.rebuild(ups)
    names = _check(first, ups)
    for order in itertools.islice(itertools.permutations(ups), 0, 40, 7):
        again = Catalog()
        again.rebuild(list(order))
        assert _check(again, ups) == names


def test_a_suffixed_name_avoids_governed_names_and_other_identities():
    ups = [_Up("s1", ["search"]), _Up("s2", ["search"]), _Up("s3", ["find"])]
    cat = Catalog()
    taken, wide = _suffixed("s2", "search"), _suffixed("s2", "search", 8)
    cat.governed = lambda: {taken, wide}  # the policy governs those names (a rule about another tool)
    cat.rebuild(ups)
    assert not cat.conflicts, cat.conflicts
    assert cat.tools["search"].identity == "s1__search" and cat.tools["find"].identity == "s3__find"
    assert taken not in cat.tools and wide not in cat.tools  # never exposed under a name the policy governs
    assert cat.identities["s2__search"].startswith("search_")
    assert {r.identity for r in cat.tools.values()} == {"s1__search", "s2__search", "s3__find"}


NAMED = str(Path(__file__).with_name("named_tools_server.py"))


def _server(label: str, *names: str) -> dict:
    return {"command": sys.executable, "args": [NAMED, label, *names], "prefix": ""}


@pytest.mark.timeout(120)
async def test_through_a_gateway_each_name_reaches_its_own_tool_decided_by_its_identity(tmp_path):
    """Real upstreams, the real client: s2's "search" clashes with s1's; a0 offers a tool literally named as
    s2's suffixed name (and its longer spelling). The policy allows s1's and a0's tools, not s2's: each
    exposed name reaches its own tool and is decided by that tool's identity."""
    literal, wider = _suffixed("s2", "search"), _suffixed("s2", "search", 8)
    config = parse_config({
        "mcpServers": {"s1": _server("s1", "search"), "s2": _server("s2", "search", "find"),
                       "a0": _server("a0", literal, wider, "find")},
        "sentinel": {"builtins": [], "data_dir": str(tmp_path), "policy": {"allow": ["s1__*", "a0__*"]}},
    }, base_dir=tmp_path)
    async with running_gateway(config) as rt:
        cat = rt.manager.catalog
        by_identity = {r.identity: n for n, r in cat.tools.items()}
        assert set(by_identity) == {"s1__search", "s2__search", "s2__find", "a0__" + literal,
                                    "a0__" + wider, "a0__find"}, cat.conflicts
        assert by_identity["a0__" + literal] == literal and by_identity["a0__" + wider] == wider
        async with Client(rt.front.server, mode="legacy") as c:
            listed = [t.name for t in (await c.list_tools()).tools]
            assert sorted(listed) == sorted(by_identity.values())  # one name a tool
            for identity, name in by_identity.items():
                r = await c.call_tool(name, {})
                body = "\n".join(getattr(b, "text", "") for b in r.content)
                server, tool = identity.split("__", 1)
                if server == "s2":  # the policy's answer for s2's tool: never another tool's result
                    assert r.is_error and "a0:" not in body and "s1:" not in body, (name, body)
                else:
                    assert not r.is_error and body == f"{server}:{tool}", (name, body)
