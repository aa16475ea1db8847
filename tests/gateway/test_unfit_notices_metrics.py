"""The operator's /metrics counts an upstream's notices no client can take (``unfit_notices.py``) by why,
under Sentinel's two words only: ``sentinel_upstream_notices_unfit_total{upstream, reason}``, reason
``unknown_method`` or ``malformed``; never a method the upstream made up (a label per name would let it grow
the series without bound, and put its text on the operator's page). A real hostile stdio upstream
(hostile_stdio_upstream.py: attack ``odd_notices_call``) through a running gateway, down the lean path and the
SDK's; beside it an upstream that sent none shows zeros."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from tests.gateway import odd_notices
from tests.gateway.helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(180)
ROOT = Path(__file__).resolve().parents[2]
METRIC = "sentinel_upstream_notices_unfit_total"


def _series(text: str) -> dict[str, int]:
    return {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line.startswith(METRIC + "{")}


@pytest.mark.parametrize("lean", [True, False], ids=["lean", "sdk"])
async def test_unfit_notices_are_on_the_metrics_by_why_never_by_the_upstreams_words(
        data_dir: Path, lean: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SENTINEL_LEAN_UPSTREAM", "on" if lean else "off")
    hostile = {"command": sys.executable, "args": ["-m", "tests.gateway.hostile_stdio_upstream"],
               "cwd": str(ROOT)}
    cfg = make_config(data_dir, servers={"h": hostile, "tb": toolbox_stdio()})
    unknown = odd_notices.EACH * len(odd_notices.UNKNOWN)
    malformed = odd_notices.EACH * len(odd_notices.MALFORMED)
    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server) as c:
            await c.call_tool("h__odd_notices_call", {})  # its result's shape is not the point here
        up = rt.manager.upstreams["h"]
        with anyio.fail_after(60):  # a bound, no timing asserted: the lean path's notices may still be read
            while up.notices_unknown + up.notices_malformed < unknown + malformed:
                await anyio.sleep(0.05)
        text = rt.metrics.render(rt.catalog_health)
    assert _series(text) == {
        f'{METRIC}{{upstream="h",reason="unknown_method"}}': unknown,
        f'{METRIC}{{upstream="h",reason="malformed"}}': malformed,
        f'{METRIC}{{upstream="tb",reason="unknown_method"}}': 0,
        f'{METRIC}{{upstream="tb",reason="malformed"}}': 0,
    }
    assert f"# TYPE {METRIC} counter" in text
    assert "made_up" not in text and "hostile/unknown" not in text and "nnnnnnnn" not in text
