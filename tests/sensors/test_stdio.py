"""``python -m device_tools.sensors`` serves the built-in alone over stdio (a real subprocess)."""

from __future__ import annotations

import json
import sys

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ElicitResult

pytestmark = pytest.mark.timeout(90)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stdio_read_with_elicited_consent(tmp_path, mode):
    params = StdioServerParameters(command=sys.executable, args=["-m", "device_tools.sensors"],
                                   env={"SENTINEL_DATA_DIR": str(tmp_path),
                                        "SENTINEL_SENSORS": json.dumps({"default_retention": 60})})

    async def accept(context, params):
        return ElicitResult(action="accept", content={"allow": True, "remember": "1 hour"})

    async with Client(params, mode=mode, elicitation_callback=accept) as c:
        r = await c.call_tool("sensor_read", {"sensor": "compass", "policy_tag": "navigation"})
        assert not r.is_error, r.content
        assert set(r.structured_content["payload"]) == {"heading", "unit"}
    assert (tmp_path / "sensors" / "sensors.db").exists()


def test_stdio_bad_settings_exit_cleanly(tmp_path):
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "device_tools.sensors"],
        check=False,
        capture_output=True,
        text=True,
        env={
            "SENTINEL_DATA_DIR": str(tmp_path),
            "SENTINEL_SENSORS": '{"source": "radar"}',
            "PATH": "/usr/bin:/bin",
        },
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2 and "sentinel.sensors.source" in proc.stderr
