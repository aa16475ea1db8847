"""A declared rate slows its requester down by a bounded wait: every client of one principal (all local
clients are ``owner``) shares its limit, so one that declared ``rate: 1e-320`` locked the principal out of
that sensor for good ("retry after inf s", ``retry_after: null``) until the gateway restarted."""

from __future__ import annotations

import pytest

from device_tools.sensors.errors import Throttled
from device_tools.sensors.rate_limiter import MAX_WAIT_SECONDS
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind


def req(**kw) -> dict:
    return {"sensor": "compass", "policy_tag": "heading-for-map", "retention": 0, **kw}


@pytest.mark.parametrize("rate", [5e-324, 1e-320, 1e-9, 1 / (MAX_WAIT_SECONDS * 10)])
async def test_a_tiny_declared_rate_locks_no_one_out(make_bridge, clock, rate):
    bridge = make_bridge()
    bridge.consents.grant("owner", SensorKind.compass, Scope.minimal)
    await bridge.handle(req(rate=rate), "owner")  # one client of the principal declares a tiny rate
    with pytest.raises(Throttled) as info:
        await bridge.handle(req(), "owner")  # another client of the same principal
    assert 0 < info.value.retry_after <= MAX_WAIT_SECONDS
    assert info.value.to_dict()["retry_after"] == round(info.value.retry_after, 3)  # a number, never null
    clock.advance(MAX_WAIT_SECONDS)
    assert (await bridge.handle(req(), "owner")).payload  # served again after the bounded wait
