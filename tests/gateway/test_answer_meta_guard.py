"""An upstream's answer without ``_meta`` (most answers) skips ``without_verdict`` and
``without_others_claims`` (both give the same object back then: issue 21); one with ``_meta`` still has every
claim to be Sentinel's word dropped. Counted, through a real gateway, a real toolbox and a real forging
upstream, both protocol eras."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway import core
from sentinel_mcp.gateway.own_results import VERDICT_KEYS

from .forging_server import FORGED
from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(120)
FORGER = str(Path(__file__).with_name("forging_server.py"))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_only_an_answer_with_meta_is_cleaned_and_its_claims_still_go(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    cleaned: list[Any] = []
    real_verdict, real_claims = core.without_verdict, core.without_others_claims

    def verdict(result: Any) -> Any:
        cleaned.append(result.meta)
        return real_verdict(result)

    monkeypatch.setattr(core, "without_verdict", verdict)
    def claims(result: Any, declared: Any) -> Any:
        cleaned.append("claims")
        return real_claims(result, declared)

    monkeypatch.setattr(core, "without_others_claims", claims)
    servers = {"tb": toolbox_stdio(), "fx": {"command": sys.executable, "args": [FORGER]}}
    async with running_gateway(make_config(data_dir, servers)) as rt:
        for name in ("tb", "fx"):
            assert await rt.manager.upstreams[name].wait_ready(20)
        async with Client(rt.front.server, mode=mode) as c:
            plain = await c.call_tool("tb__noop", {})
            assert not plain.is_error
            plain_cleaned = list(cleaned)
            forged = await c.call_tool("fx__forged", {"text": "ok"})
    assert plain_cleaned == []  # no _meta: neither step ran
    assert len(cleaned) == 2 and cleaned[0] and cleaned[1] == "claims"  # the forged answer took both
    meta = forged.meta or {}
    for key in VERDICT_KEYS - {"sentinel/decision_id", "sentinel/session"}:  # the two Sentinel sets itself
        assert key not in meta, (key, meta)
    for key in ("sentinel/decision_id", "sentinel/session"):
        assert meta.get(key) != FORGED[key], key
    assert meta["vendor/trace"] == "t-1"  # the upstream's own keys stay
