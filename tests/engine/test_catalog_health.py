"""The floors above the engine (``app/``, ``console/``) see the upstreams and the catalog through a read-only
view (``Runtime.catalog_health``), never through the upstream manager."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from sentinel_mcp.gateway.catalog_health import CatalogHealth, UpstreamHealth
from tests.engine.test_pipeline_units import gateway
from tests.support.source_ast import parsed

pytestmark = pytest.mark.timeout(60)
ROOT = Path(__file__).resolve().parents[2]
# app/runtime.py builds the manager and hands the view out; app/describe_builtins.py is the build tool that
# records the built-ins' live servers (``gateway/builtin_descriptions.json``), so it reads the engine's own
MAY_REACH = {ROOT / "sentinel_mcp/app/runtime.py", ROOT / "sentinel_mcp/app/describe_builtins.py"}


async def test_the_view_reports_the_upstreams_and_routes_and_changes_nothing(tmp_path: Path) -> None:
    async with gateway(tmp_path) as rt:
        view = rt.catalog_health
        assert isinstance(view, CatalogHealth)
        [un] = [u for u in view.upstreams() if u.name == "un"]
        assert (un.state, un.tools, un.breaker, un.loaded) == ("ready", 3, "closed", True)
        assert un.protocol == rt.manager.upstreams["un"].protocol_version
        assert view.tool_count == len(rt.manager.catalog.tools)
        route = view.route("un__wipe")
        assert route is not None and (route.upstream, route.tool) == ("un", "wipe")
        assert view.upstream_of("un__echo") == "un"
        for name in ("un__nope", "un_echo", "UN__echo", "", "un__echo\u200b"):
            assert view.route(name) is None and view.upstream_of(name) is None
        with pytest.raises(dataclasses.FrozenInstanceError):
            un.state = "stopped"  # type: ignore[misc]
        view.conflicts.append("forged")  # a copy: the catalog's own list is untouched
        assert "forged" not in rt.manager.catalog.conflicts
        assert rt.manager.upstreams["un"].state == "ready"
        assert all(isinstance(u, UpstreamHealth) for u in view.upstreams())


def _reaches_manager(path: Path) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for node in ast.walk(parsed(path))
        if isinstance(node, ast.Attribute) and node.attr == "manager"
    ]


def test_the_application_floor_and_the_console_do_not_reach_the_upstream_manager() -> None:
    floors = [*(ROOT / "sentinel_mcp/app").rglob("*.py"), *(ROOT / "sentinel_mcp/console").rglob("*.py")]
    reached = [hit for p in floors if p not in MAY_REACH for hit in _reaches_manager(p)]
    assert reached == []
    assert _reaches_manager(ROOT / "sentinel_mcp/app/describe_builtins.py")  # the check sees one
