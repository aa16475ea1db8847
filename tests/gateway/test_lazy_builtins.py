"""Cold start (issue 21): the device, sensors and swarm built-ins are served from their recorded
descriptions (gateway/builtin_descriptions.json) and built on first use. The record must equal what the code
registers, the catalog a client lists must be the same bytes lazily and eagerly (both protocol eras), the
first call builds the built-in and goes through the guard like any other, and one that fails to build is
reported (problems, its upstream stopped, its tools withdrawn) at that first use."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.describe_builtins import default_without_upstreams, describe_all
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core import builtin as builtin_registry
from sentinel_mcp.gateway.audit import read_audit
from sentinel_mcp.gateway.builtin_description import FILE, RECORDED

pytestmark = pytest.mark.timeout(120)
THREADED = "tests.gateway.threaded_import_builtin"


def _config() -> Any:  # its state under the ``data_dir`` fixture's directory
    return default_without_upstreams()


async def test_the_record_equals_what_the_builtins_register(tmp_path, data_dir):
    recorded = json.loads(FILE.read_text(encoding="utf-8"))
    now = await describe_all(_config())
    assert set(now) == set(RECORDED)
    # on a difference: python -m sentinel_mcp.app.describe_builtins writes the record again
    assert now == recorded


async def _listing(rt: Any, mode: str) -> tuple[str, str, str, str]:
    async with Client(rt.front.server, mode=mode) as c:  # type: ignore[arg-type]
        def dump(items: Any) -> str:
            return json.dumps([i.model_dump(mode="json", by_alias=True) for i in items], sort_keys=True)

        tools = dump((await c.list_tools()).tools)
        resources = dump((await c.list_resources()).resources)
        templates = dump((await c.list_resource_templates()).resource_templates)
        prompts = dump((await c.list_prompts()).prompts)
        return tools, resources, templates, prompts


async def test_the_catalog_is_the_same_bytes_lazily_and_eagerly(tmp_path, data_dir):
    seen: dict[bool, Any] = {}
    for lazy in (True, False):
        # every recorded built-in deferred, as the stdio front defers them (the agent's too)
        async with running_gateway(_config(), lazy_builtins=lazy, deferrable=RECORDED) as rt:
            loaded = {n: rt.manager.upstreams[n].loaded for n in RECORDED}
            assert loaded == {n: not lazy for n in RECORDED}
            seen[lazy] = [await _listing(rt, mode) for mode in ("legacy", "auto")]
            routes = rt.manager.catalog.tools
            seen[lazy].append(sorted((n, r.identity, r.upstream) for n, r in routes.items()))
            # the era decides whether a call is held for its own questions: known before it is built
            seen[lazy].append([(n, rt.front.port.pushes_mid_call(n)) for n in sorted(routes)])
            seen[lazy].append({n: rt.manager.upstreams[n].offers("resources") for n in RECORDED})
            if lazy:  # listing does not build them
                assert all(rt.manager.upstreams[n].target.server is None for n in RECORDED)
            assert rt.problems == []
    assert seen[True] == seen[False]
    assert '"device__screen_read"' in seen[True][0][0]


async def test_the_first_call_builds_the_builtin_and_is_guarded(tmp_path, data_dir):
    async with running_gateway(_config()) as rt:
        up = rt.manager.upstreams["sensors"]
        assert not up.loaded and up.target.server is None
        async with Client(rt.front.server, mode="legacy") as c:
            listed = await c.call_tool("sensors__sensor_list", {})
        assert up.loaded and up.target.server is not None and up.client is not None
        assert not listed.is_error, listed.content
        await rt.audit.flush()
        assert rt.manager.upstreams["device"].target.server is None  # only what was used
    audited = await read_audit(data_dir / "sentinel.db", tail=50)
    rows = [r for r in audited if r["tool"] == "sensors__sensor_list"]
    assert [r["decision"] for r in rows] == ["allow"]  # decided by the guard and audited, as before


async def test_a_builtin_that_fails_to_build_is_reported_at_first_use(tmp_path, data_dir, monkeypatch):
    monkeypatch.setitem(builtin_registry.BUILTINS, "swarm", "tests.gateway.test_lazy_builtins:_broken")
    async with running_gateway(_config()) as rt:
        up = rt.manager.upstreams["swarm"]
        assert "swarm__swarm_build" in rt.manager.catalog.tools and rt.problems == []
        async with Client(rt.front.server, mode="legacy") as c:
            result = await c.call_tool("swarm__swarm_validate", {"spec": {}})
            assert result.is_error and "no toolchain here" in str(result.content)
            names = {t.name for t in (await c.list_tools()).tools}
        assert up.state == "stopped" and "RuntimeError: no toolchain here" in (up.last_error or "")
        assert rt.problems == ["built-in 'swarm' not started: RuntimeError: no toolchain here"]
        assert not any(n.startswith("swarm__") for n in names) and "device__screen_read" in names
        assert "swarm__swarm_build" not in rt.manager.catalog.tools


def _broken(ctx: Any) -> Any:
    raise RuntimeError("no toolchain here")


async def test_the_first_use_imports_the_builtin_off_the_event_loop(tmp_path, data_dir, monkeypatch):
    """Its modules are imported in a worker thread (other requests keep being served), then its server built.
    """
    monkeypatch.setitem(builtin_registry.BUILTINS, "swarm", f"{THREADED}:create_server")
    monkeypatch.delitem(sys.modules, THREADED, raising=False)
    async with running_gateway(_config()) as rt:
        up = rt.manager.upstreams["swarm"]
        assert THREADED not in sys.modules
        async with Client(rt.front.server, mode="legacy") as c:
            result = await c.call_tool("swarm__swarm_validate", {"spec": {}})
        assert up.loaded and up.target.server is not None and rt.problems == []
        assert result.content  # answered by the built server (the spec's problems)
        module = sys.modules[THREADED]
        assert module.IMPORTED_IN is not threading.main_thread()


async def test_a_builtin_whose_import_fails_is_reported_at_first_use(tmp_path, data_dir, monkeypatch):
    monkeypatch.setitem(builtin_registry.BUILTINS, "swarm", f"{THREADED}:create_server")
    monkeypatch.delitem(sys.modules, THREADED, raising=False)
    monkeypatch.setenv("SENTINEL_TEST_BROKEN_IMPORT", "1")
    async with running_gateway(_config()) as rt:
        up = rt.manager.upstreams["swarm"]
        async with Client(rt.front.server, mode="legacy") as c:
            result = await c.call_tool("swarm__swarm_validate", {"spec": {}})
            names = {t.name for t in (await c.list_tools()).tools}
        assert result.is_error and "does not import" in str(result.content)
        assert up.state == "stopped" and up.target.server is None
        assert rt.problems == ["built-in 'swarm' not started: RuntimeError: a module of it does not import"]
        assert not any(n.startswith("swarm__") for n in names) and "device__screen_read" in names


async def test_other_settings_than_the_recorded_ones_start_eagerly(tmp_path, data_dir):
    config = _config()
    assert config.sentinel.model_extra is not None
    config.sentinel.model_extra["sensors"] = {"source": "simulated", "default_retention": 60}
    async with running_gateway(config) as rt:
        assert rt.manager.upstreams["sensors"].loaded
        assert not rt.manager.upstreams["device"].loaded


async def test_reading_a_resource_builds_its_builtin(tmp_path, data_dir):
    async with running_gateway(_config()) as rt:
        up = rt.manager.upstreams["sentinel"]
        assert not up.loaded
        async with Client(rt.front.server, mode="legacy") as c:
            listed = (await c.list_resources()).resources
            assert "sentinel://rulebase" in {str(r.uri) for r in listed} and not up.loaded
            read = await c.read_resource("sentinel://rulebase")
        assert up.loaded and up.client is not None
        assert read.contents
