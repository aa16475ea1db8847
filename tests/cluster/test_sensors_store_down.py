"""The sensors built-in on a shared PostgreSQL that is down when it starts: it starts (degraded, not missing),
refuses its calls with ``store_unavailable`` and the cause, and serves by itself once the server is up (its
tables set up at the first call then); through the whole gateway too, whose ``/healthz``-facing storage status
says why while the server is down."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import AsyncIterator

import pytest
from mcp import Client
from mcp.types import ElicitResult

from device_tools.sensors import database as sensor_database
from device_tools.sensors.server import create_server
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.storage.local_server import LocalServer
from tests.conftest import free_port
from sentinel_mcp.storage.open import storage_status
from tests.gateway.helpers import make_config

pytestmark = pytest.mark.timeout(120)
READ = {"sensor": "battery", "scope": "minimal", "policy_tag": "battery-for-status"}


async def allow(context, params):  # noqa: ANN001 - the SDK's callback shape
    return ElicitResult(action="accept", content={"allow": True, "remember": "this request only"})


@pytest.fixture
async def stopped_server() -> AsyncIterator[LocalServer]:
    root = Path(tempfile.mkdtemp(prefix="sentinel-pg-sensors-"))
    srv = LocalServer(root / "pg", free_port())
    try:
        await asyncio.to_thread(srv.init)  # initialised, not started
        yield srv
    finally:
        await asyncio.to_thread(srv.stop, "immediate")
        shutil.rmtree(root, ignore_errors=True)


async def test_sensors_start_degraded_refuse_and_recover(stopped_server: LocalServer, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sensor_database, "RETRY_SECONDS", 0.0)  # every call tries again (no waiting in tests)
    server = create_server(BuiltinContext(name="sensors", data_dir=tmp_path / "sensors", settings={},
                                          store=stopped_server.url))
    async with Client(server, mode="legacy", elicitation_callback=allow) as c:
        for tool, args in (("sensor_read", READ), ("sensor_consent", {"action": "list"}),
                           ("sensor_retained", {})):
            r = await c.call_tool(tool, args)
            # a read that cannot be recorded says so; the other tools, that the store is unavailable
            expected = "not_recorded" if tool == "sensor_read" else "store_unavailable"
            assert r.is_error and r.structured_content["error"] == expected, (tool, r)
            assert "sensors store" in r.structured_content["message"], r  # with the cause
        await asyncio.to_thread(stopped_server.start)
        r = await c.call_tool("sensor_read", READ)
        assert not r.is_error, r.content
        listed = await c.call_tool("sensor_consent", {"action": "list"})
        assert listed.structured_content == {"consents": []}


async def test_gateway_with_sensors_starts_while_postgres_is_down(stopped_server: LocalServer,
                                                                  tmp_path: Path) -> None:
    cfg = make_config(tmp_path / "gw", servers={}, builtins=["sensors"], store=stopped_server.url,
                      cluster={"seal_key": "s" * 32})  # required on a server store
    async with running_gateway(cfg) as rt:
        assert not [p for p in rt.problems if "sensors" in p], rt.problems  # started, not left out
        for _ in range(100):  # the built-in's tools reach the catalog (bounded wait)
            names = set(rt.manager.catalog.tools)
            if any("sensor_read" in n for n in names):
                break
            await asyncio.sleep(0.05)
        assert any("sensor_read" in n for n in names), names
        down = [s for s in storage_status().values() if not s["ok"]]
        assert down and all(s["cause"] for s in down)  # /healthz: degraded, with the cause
