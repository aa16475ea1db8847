"""Start-up overlap: the config's stdio upstreams are spawned before the built-ins load (and the guard
starts),
and that order changes nothing about how a broken upstream is reported and reconnected."""

from __future__ import annotations

import logging

import anyio
import pytest
from mcp import Client

from sentinel_mcp.app import runtime as runtime_module
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.errors import SentinelError
from sentinel_mcp.gateway.upstream_manager import UpstreamManager

from .helpers import alive, make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(90)


async def wait_until(predicate, timeout: float = 20.0) -> None:  # noqa: ANN001
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.05)


class _Recording(UpstreamManager):
    made: list[UpstreamManager] = []

    def __init__(self) -> None:
        super().__init__()
        _Recording.made.append(self)


async def test_stdio_upstreams_are_spawned_before_the_builtins_load(data_dir, monkeypatch):
    _Recording.made = []
    monkeypatch.setattr(runtime_module, "UpstreamManager", _Recording)
    monkeypatch.setattr(runtime_module, "LAUNCH_WAIT", 60.0)  # no race with the bound on a loaded machine
    seen: dict[str, object] = {}
    real_load = runtime_module.load_factory

    def load_factory(name: str):  # noqa: ANN202
        up = _Recording.made[-1].upstreams["tb"]
        seen[name] = (up.launched.is_set(), up.state)
        return real_load(name)

    monkeypatch.setattr(runtime_module, "load_factory", load_factory)
    cfg = make_config(data_dir, builtins=["sentinel"])
    # built at start (a described built-in is built on first use, after start-up: nothing to order there)
    async with running_gateway(cfg, lazy_builtins=False) as rt:
        launched, state = seen["sentinel"]
        assert launched, "the stdio upstream was not spawned before the built-ins loaded"
        assert state != "stopped"
        # and start-up still waited for everything: both are in the catalog before any call
        assert rt.manager.upstreams["tb"].state == "ready"
        names = set(rt.manager.catalog.tools)
        assert any(n.startswith("tb__") for n in names) and any(n.startswith("sentinel__") for n in names)
        async with Client(rt.front.server) as c:
            assert (await c.call_tool("tb__echo", {"text": "early"})).content[0].text == "early"


async def test_missing_command_spawned_early_is_still_reported_and_retried(data_dir, caplog):
    cfg = make_config(
        data_dir,
        servers={"missing": {"command": "/nonexistent/sentinel-early"}, "tb": toolbox_stdio()},
        builtins=["sentinel"],
    )
    with caplog.at_level(logging.WARNING), anyio.fail_after(30):
        async with running_gateway(cfg, startup_wait=3.0) as rt:
            missing = rt.manager.upstreams["missing"]
            assert missing.state != "ready"
            assert missing.last_error is not None and "not found" in missing.last_error
            assert "/nonexistent/sentinel-early" in missing.last_error
            await wait_until(lambda: missing.reconnects >= 1)  # it keeps being retried, with backoff
            status = {s.name: s for s in (u.status() for u in rt.manager.upstreams.values())}
            assert status["missing"].last_error == missing.last_error  # what /healthz shows
            # the toolbox may still be starting on a loaded machine: start-up waits at most 3 s here
            await wait_until(lambda: rt.manager.upstreams["tb"].state == "ready")
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "upstream missing" in logged and "not found" in logged


async def test_upstream_spawned_early_that_dies_is_reconnected(data_dir):
    cfg = make_config(data_dir, builtins=["sentinel"])
    async with running_gateway(cfg) as rt:
        up = rt.manager.upstreams["tb"]
        async with Client(rt.front.server) as c:
            first = int((await c.call_tool("tb__pid", {})).content[0].text)
            r = await c.call_tool("tb__die", {})
            assert r.is_error
            await wait_until(lambda: not alive(first), timeout=5.0)
            await wait_until(lambda: up.state == "ready" and up.reconnects >= 1)
            second = int((await c.call_tool("tb__pid", {})).content[0].text)
            assert second != first and alive(second)


async def test_setup_error_before_serving_is_raised_as_itself(data_dir, monkeypatch):
    class Broken(SentinelError):
        pass

    def broken_claim(config):  # noqa: ANN001, ANN202
        raise Broken("no instance directory")

    monkeypatch.setattr(runtime_module, "_claim_instance", broken_claim)
    with anyio.fail_after(30), pytest.raises(Broken, match="no instance directory"):
        async with running_gateway(make_config(data_dir)):
            pass


async def test_host_error_while_serving_is_grouped_once_as_before(data_dir):
    class HostFailed(SentinelError):
        pass

    with anyio.fail_after(30), pytest.raises(BaseExceptionGroup) as caught:
        async with running_gateway(make_config(data_dir)):
            raise HostFailed("the host's own error")
    assert [type(e) for e in caught.value.exceptions] == [HostFailed]
