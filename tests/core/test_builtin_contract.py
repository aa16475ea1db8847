"""The built-in contract: each built-in exports ``Settings`` and ``create_server(ctx)``, and
``sentinel-mcp builtin NAME`` runs any of them alone over stdio (a real subprocess, the real MCP client)."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys

import pytest
from mcp import Client, StdioServerParameters
from pydantic import BaseModel

from sentinel_mcp.core.builtin import BUILTINS, BuiltinContext, SECTION_MODELS, load_section_model

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_each_built_in_exports_settings_and_create_server(name):
    module_name, _, attr = BUILTINS[name].partition(":")
    module = importlib.import_module(module_name)
    assert attr == "create_server"
    factory = getattr(module, "create_server")
    first = next(iter(inspect.signature(factory).parameters.values()))
    assert first.annotation in (BuiltinContext, "BuiltinContext")
    assert issubclass(module.Settings, BaseModel)
    assert name in SECTION_MODELS and module.Settings is load_section_model(name)


def _sentinel(*args: str, tmp_path, config: dict | None = None) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps(config or {"sentinel": {"data_dir": str(tmp_path / "data")}}))
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(path), "builtin", *args],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("override,key", [
    ("backend=bogus", "sentinel.device.backend"), ("backend=ADB", "sentinel.device.backend"),
    ("backnd=adb", "sentinel.device.backnd"), ("adb_port=0", "sentinel.device.adb_port"),
    ("adb_port=\"x\"", "sentinel.device.adb_port"), ("confirm_timeout=-1", "sentinel.device.confirm_timeout"),
])
def test_a_bad_override_stops_before_serving(tmp_path, override, key):
    run = _sentinel("device", "--set", override, tmp_path=tmp_path)
    assert run.returncode == 2 and key in run.stderr, run.stderr
    assert "serving over stdio" not in run.stderr


@pytest.mark.parametrize("word", ["=adb", "backend", "  =1"])
def test_a_malformed_override_is_refused(tmp_path, word):
    run = _sentinel("device", "--set", word, tmp_path=tmp_path)
    assert run.returncode == 2 and "KEY=VALUE" in run.stderr, run.stderr


@pytest.mark.parametrize("name", ["devcie", "Device", "gateway", "../device", ""])
def test_an_unknown_built_in_is_refused(tmp_path, name):
    run = _sentinel(name, tmp_path=tmp_path)
    assert run.returncode == 2 and "invalid choice" in run.stderr


def test_the_config_section_is_checked_too(tmp_path):
    run = _sentinel("device", tmp_path=tmp_path, config={"sentinel": {"device": {"backend": "bogus"}}})
    assert run.returncode == 2 and "sentinel.device.backend" in run.stderr and "sentinel.json" in run.stderr


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_built_in_runs_alone_over_stdio(tmp_path, mode):
    config = tmp_path / "sentinel.json"
    config.write_text(json.dumps({"sentinel": {"data_dir": str(tmp_path / "data"),
                                               "device": {"backend": "simulated"}}}))
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "sentinel_mcp", "-c", str(config), "builtin", "device",
                                         "--set", "dump_attempts=2"])
    async with Client(params, mode=mode) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "screen_read" in names
        result = await client.call_tool("screen_read", {})
        assert not result.is_error, result.content
    assert (tmp_path / "data" / "device").is_dir()


def test_services_are_typed_and_refuse_unknown_names(tmp_path):
    from sentinel_mcp.core.builtin import Services

    # the dict spelling still works
    ctx = BuiltinContext(name="x", data_dir=tmp_path, services={"guard": "g"})
    assert isinstance(ctx.services, Services) and ctx.services.guard == "g" and ctx.services["guard"] == "g"
    assert "guard" in ctx.services and "gateway" not in ctx.services and ctx.services.get("gateway") is None
    assert ctx.services.setdefault("cortex", 1) == 1 and ctx.services.setdefault("cortex", 2) == 1
    for bad in ("gaurd", "Guard", "__class__", "_name", "get"):
        with pytest.raises((KeyError, TypeError)):
            ctx.services[bad] = 1
        assert bad not in ctx.services
    with pytest.raises(TypeError):
        BuiltinContext(name="x", data_dir=tmp_path, services={"gaurd": "g"})
