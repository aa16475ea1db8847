"""A resource two servers could claim is served by neither (gateway/catalog.py), as a tool name two servers
share is withheld: never settled by which server's name sorts first. A hostile upstream listing another
server's exact URI, a URI under its template, or a template over its URIs gets none of their reads."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from sentinel_mcp.app.runtime import running_gateway

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(90)


def claimer(log: Path, uris: str = "", templates: str = "") -> dict:
    env = {"LOG": str(log), "URIS": uris, "TEMPLATES": templates, "PYTHONPATH": str(sys.path[0])}
    return {"command": sys.executable, "args": ["-m", "tests.gateway.resource_claimer"], "env": env}


async def read(client: Client, uri: str) -> str | None:
    try:
        result = await client.read_resource(uri)
    except MCPError:
        return None
    return result.contents[0].text


@pytest.mark.parametrize("name", ["aa", "zz"])  # sorting before or after the toolbox changes nothing
@pytest.mark.parametrize("uris,templates", [
    ("toolbox://static", ""),  # the same exact URI
    ("toolbox://item/secret-key-123", ""),  # a URI under the toolbox's template
    ("", "toolbox://{rest}"),  # a template over the toolbox's URIs
    ("toolbox://static,toolbox://item/secret-key-123", "toolbox://item/{key}"),
])
async def test_a_contested_resource_is_served_by_nobody(data_dir, tmp_path, name, uris, templates):
    log = tmp_path / "reads.log"
    servers = {"tb": toolbox_stdio(), name: claimer(log, uris, templates)}
    with anyio.fail_after(60):
        async with running_gateway(make_config(data_dir, servers)) as rt, Client(rt.front.server) as c:
            contested = [await read(c, u) for u in ("toolbox://static", "toolbox://item/secret-key-123")]
            conflicts = list(rt.manager.catalog.conflicts)
    assert not log.exists() or log.read_text() == ""  # the claimer read nothing
    assert all(text is None or not text.startswith("claimer") for text in contested)
    assert any("withheld from all of them" in c and repr(name) in c for c in conflicts)


async def test_resources_of_their_own_still_work_side_by_side(data_dir, tmp_path):
    log = tmp_path / "reads.log"
    servers = {"tb": toolbox_stdio(), "aa": claimer(log, "claimer://one", "claimer://item/{key}")}
    with anyio.fail_after(60):
        async with running_gateway(make_config(data_dir, servers)) as rt, Client(rt.front.server) as c:
            assert await read(c, "claimer://one") == "claimer: claimer://one"
            assert await read(c, "claimer://item/7") == "claimer: claimer://item/7"
            assert await read(c, "toolbox://static") not in (None, "")
            assert (await read(c, "toolbox://item/k1") or "").startswith("claimer") is False
            assert rt.manager.catalog.conflicts == []


@pytest.mark.parametrize("name", ["aa", "zz"])
@pytest.mark.parametrize("templates", [
    "toolbox://item/{key}",  # the toolbox's own template
    "toolbox://item/{key}/more",  # one that matches no URI of the toolbox's, but could match its URIs' kind
    "toolbox://it{x}",  # a shorter literal part
])
async def test_overlapping_templates_are_withheld_from_both_and_reported(data_dir, tmp_path, name, templates):
    """No exact URI is claimed twice, yet two servers' templates could match one URI: neither template is
    listed or routed, each is reported; the toolbox's own exact URI is still its own."""
    log = tmp_path / "reads.log"
    servers = {"tb": toolbox_stdio(), name: claimer(log, "", templates)}
    with anyio.fail_after(60):
        async with running_gateway(make_config(data_dir, servers)) as rt, Client(rt.front.server) as c:
            listed = [t.uri_template for t in (await c.list_resource_templates()).resource_templates]
            item = await read(c, "toolbox://item/secret-key-123")
            static = await read(c, "toolbox://static")
            conflicts = list(rt.manager.catalog.conflicts)
            problems = rt.catalog_health.problems
    assert not log.exists() or log.read_text() == ""
    assert item is None or not item.startswith("claimer")
    assert static is not None and not static.startswith("claimer")
    assert "toolbox://item/{key}" not in listed and templates not in listed
    withheld = [c for c in conflicts if "resource template" in c and "withheld from all of them" in c]
    assert any(repr("tb") in c for c in withheld) and any(repr(name) in c for c in withheld)
    assert all(c in problems for c in withheld)
