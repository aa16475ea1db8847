"""A read names why it needs the data: ``policy_tag`` is visible text on one line. Before, a tag of a space,
a zero-width space or a direction mark passed both the rulebase (``Tag \\== ''``) and the request's
``min_length=1``: a read whose audit row and consent question name no purpose at all."""

from __future__ import annotations

import pytest

from device_tools.sensors.errors import InvalidRequest
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind


@pytest.mark.parametrize("tag", [" ", "\t", "\u200b", "\u202e", "\u00a0\u3000", "\u2028", "why\nnot",
                                 "a\x00b", "\ufeff", "search\u202e"])
async def test_a_purpose_that_says_nothing_is_refused(make_bridge, tag):
    bridge = make_bridge()
    bridge.consents.grant("agent-a", SensorKind.battery, Scope.minimal)
    with pytest.raises(InvalidRequest, match="policy_tag"):
        await bridge.handle({"sensor": "battery", "policy_tag": tag}, "agent-a")
    assert bridge.consent_question("agent-a", {"sensor": "location", "policy_tag": tag}) is None
    [row] = bridge.audit.rows()
    assert row["decision"] == "invalid"


@pytest.mark.parametrize("tag", ["location-for-search", "navigation to Zürich", "天気", "t"])
async def test_a_purpose_in_words_is_taken(make_bridge, tag):
    bridge = make_bridge()
    bridge.consents.grant("agent-a", SensorKind.battery, Scope.minimal)
    assert (await bridge.handle({"sensor": "battery", "policy_tag": tag}, "agent-a")).payload
