"""A built-in whose optional dependency is not installed (a wheel installed without its extra: the device's
adb backend needs ``adbutils``, local inference ``llama-cpp-python``) says which extra to install, not only
Python's ``No module named 'adbutils'``."""

from __future__ import annotations

import pytest

from sentinel_mcp.app.runtime import not_started


@pytest.mark.parametrize("module,extra", [
    ("adbutils", "device"), ("adbutils.errors", "device"), ("llama_cpp", "llm"), ("llguidance", "llm"),
    ("psycopg", "postgres"), ("psycopg_pool", "postgres"),
])
def test_a_missing_optional_module_names_its_extra(module: str, extra: str) -> None:
    error = ModuleNotFoundError(f"No module named {module!r}", name=module)
    text = not_started("device", error)
    assert text.startswith("built-in 'device' not started: ModuleNotFoundError: "), text
    assert f"pip install 'sentinel-mcp-gateway[{extra}]'" in text, text


@pytest.mark.parametrize("error", [
    ModuleNotFoundError("No module named 'adbutilsx'", name="adbutilsx"),
    ModuleNotFoundError("No module named 'sentinel_mcp.nope'", name="sentinel_mcp.nope"),
    ModuleNotFoundError("no name"),
    RuntimeError("adbutils"),
])
def test_any_other_failure_is_told_as_it_is(error: Exception) -> None:
    text = not_started("device", error)
    assert "pip install" not in text and text.endswith(str(error)), text
