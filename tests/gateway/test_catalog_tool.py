"""``CatalogView.catalog_tool(name, principal)`` (the lean 2026 call's look-up of a tool's input schema) is
the first tool of that name in ``list_catalog_tools(principal)``, for every name (shown, suffixed after a
clash, an identity, unknown, another case) and every principal (unrestricted, limited by upstream and tool
patterns, an agent, none), on a real catalog built from clashing stand-in upstreams; a route kept under a name
its tool is not shown by is searched for as the list would be."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from mcp.types import Tool

from sentinel_mcp.gateway.catalog import Catalog, ToolRoute
from sentinel_mcp.gateway.catalog_view import CatalogView
from sentinel_mcp.identity.principal import OWNER, Principal
from tests.gateway.catalog_upstream import StandInUpstream as _Up

PRINCIPALS: list[Any] = [
    None, OWNER, Principal("bob", "token"), Principal("carol", "token", upstreams=("s1", "a*")),
    Principal("dave", "token", tools=("s2__*", "*__find", "m5__search_")),
    Principal("erin", "token", upstreams=("z9",), tools=("nothing",)),
    Principal("agent", "token", tools=("s3__search",), agent=True)]


def _view(cat: Catalog) -> CatalogView:
    view = CatalogView.__new__(CatalogView)
    view.manager = SimpleNamespace(catalog=cat)  # type: ignore[assignment]
    return view


def _listed(view: CatalogView, name: str, principal: Any) -> Any:
    return next((t for t in view.list_catalog_tools(principal) if t.name == name), None)


def test_the_tool_found_by_its_route_is_the_one_the_list_shows() -> None:
    cat = Catalog()
    cat.rebuild([_Up(f"s{i}", ["search", "find"]) for i in range(1, 5)]
                + [_Up("a0", ["search_x", "Find"]), _Up("m5", ["search_", "find_0"]), _Up("z9", ["only"])])
    view = _view(cat)
    identities = [r.identity for r in cat.tools.values()]
    names = [*cat.tools, "s1__search", "S1__SEARCH", "search", "nope", "", "find ", *identities]
    found = 0
    for principal in PRINCIPALS:
        for name in names:
            want = _listed(view, name, principal)
            assert view.catalog_tool(name, principal) is want, (name, principal)
            found += want is not None
    assert found > 30  # the corpus holds names each principal reaches, and names it does not


def test_a_route_under_another_name_is_searched_as_the_list_is() -> None:
    cat = Catalog()
    cat.rebuild([_Up("s1", ["search"])])
    odd = Tool(name="shown", inputSchema={"type": "object"})
    cat.tools = {**cat.tools, "kept": ToolRoute("s1", "kept", odd)}
    view = _view(cat)
    for principal in PRINCIPALS:
        for name in ("kept", "shown", "search"):
            assert view.catalog_tool(name, principal) is _listed(view, name, principal), (name, principal)
