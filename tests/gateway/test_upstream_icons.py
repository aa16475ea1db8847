"""An upstream's icons reach the client only as small inline raster images (gateway/upstream_icons.py), on
every kind it lists (tools, prompts, resources, templates): before, each passed as the upstream wrote it, so a
client drawing the catalog fetched from a host the upstream chose (a tracking pixel), or got megabytes of
``data:`` or an SVG with script in it.

Real gateway, real client in both eras, the upstream a real server in a subprocess."""

from __future__ import annotations

import base64
import sys

import pytest
from mcp import Client
from mcp.types import Icon

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.upstream_icons import MAX_ICON_BYTES, safe_icon

from .decorated_upstream import PNG
from .helpers import make_config

pytestmark = pytest.mark.timeout(90)
KEPT = "data:image/png;base64," + PNG


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_only_small_inline_raster_icons_reach_the_client(data_dir, mode):  # noqa: ANN001
    server = {"command": sys.executable, "args": ["-m", "tests.gateway.decorated_upstream"],
              "env": {"PYTHONPATH": sys.path[0]}}
    async with running_gateway(make_config(data_dir, {"dc": server}, builtins=[])) as rt:
        async with Client(rt.front.server, mode=mode) as c:
            listed = {
                "tools": (await c.list_tools()).tools,
                "prompts": (await c.list_prompts()).prompts,
                "resources": (await c.list_resources()).resources,
                "templates": (await c.list_resource_templates()).resource_templates,
                "a result's resource link": (await c.call_tool("dc__linked", {})).content,
            }
    for kind, items in listed.items():
        assert items, kind
        for item in items:
            icons = item.icons or []
            # the one small PNG is kept, with its own type and only well-formed sizes
            assert [(i.src, i.mime_type, i.sizes) for i in icons] == [(KEPT, "image/png", ["16x16"])], (
                kind, [i.src[:60] for i in icons])


@pytest.mark.parametrize("src", [
    "https://tracker.example/pixel.png", "http://10.0.0.1/x.png", "file:///etc/passwd", "//host/p.png",
    "javascript:alert(1)", "data:image/svg+xml;base64," + base64.b64encode(b"<svg/>").decode(),
    "data:image/svg+xml,<svg onload=alert(1)>", "data:text/html;base64,PGI+",
    "data:image/png;base64," + base64.b64encode(b"<svg/>").decode(),  # an SVG said to be a PNG
    "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * MAX_ICON_BYTES).decode(),
    "data:image/png;base64,!!!!", "DATA:image/png;base64," + PNG, "data:image/png;charset=x;base64," + PNG,
    " data:image/png;base64," + PNG, "data:image/png;base64," + PNG + "\n",
])
def test_an_icon_that_is_not_a_small_inline_raster_is_dropped(src: str) -> None:
    assert safe_icon(Icon(src=src, mime_type="image/png")) is None


def test_a_small_inline_raster_icon_is_kept() -> None:
    kept = safe_icon(Icon(src=KEPT, mime_type="image/svg+xml", sizes=["16x16", "any", "x" * 100]))
    assert kept is not None and kept.mime_type == "image/png" and kept.sizes == ["16x16", "any"]
