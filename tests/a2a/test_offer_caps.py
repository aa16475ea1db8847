"""The A2A offer's capabilities come from the catalog by the tools' identities, whatever prefix serves them.
"""

from __future__ import annotations

import pytest

from sentinel_mcp.a2a.orchestrator import device_caps
from sentinel_mcp.core.tool_ref import ToolRef
from tests.core.test_tool_ref import _catalog


@pytest.mark.parametrize("prefix", [None, "phone", ""])
def test_an_offers_capabilities_are_read_from_the_catalog_under_any_prefix(prefix):
    """The A2A offer states the sensors and the local LLM by their tools' identities, not by literal names."""
    catalog = _catalog(("sensors", prefix, ["sensor_read"]), ("llm", prefix, ["llm_generate"]))
    names = [
        t
        for t in (
            ToolRef("sensors", "sensor_read").resolve(catalog),
            ToolRef("llm", "llm_generate").resolve(catalog),
        )
        if t is not None
    ]
    _, caps = device_caps([t.name for t in names], catalog)
    assert caps.sensors == ["location", "battery"] and caps.ai_capabilities == ["local_llm"]
    _, none = device_caps(["other__sensor_read"], catalog)  # another server's tool of that name is no sensor
    assert none.sensors == [] and none.ai_capabilities == []
