"""A remembered yes is a yes to what the question said: the purpose (``policy_tag``) and how long the reading
is kept. The person was asked "Allow 'agent-a' to read your location at standard scope for
'location-for-search' (not kept)?" and answered yes, remember for a day; a later read for another purpose, or
kept longer, is asked again (and refused when nobody can be asked), never served under that yes. Before, the
remembered consent named only the sensor and scope: the requester read for 'track-commute', kept for a day,
without a question. A grant the owner made (CLI, console, the consent tool) names no purpose and covers every
one, as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from device_tools.sensors.bridge import UserConsent
from device_tools.sensors.consent_registry import ANY_REQUESTER, ConsentRegistry
from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.errors import ConsentRequired
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind

pytestmark = pytest.mark.timeout(60)
ASKED = {"sensor": "location", "scope": "standard", "policy_tag": "location-for-search", "retention": 0}
DAY = UserConsent(allow=True, remember="1 day")


@pytest.mark.parametrize("changed", [
    {"policy_tag": "track-commute"},
    {"policy_tag": "Location-for-search"},  # a purpose is its exact text: another spelling is asked again
    {"policy_tag": "location-for-search "},
    {"retention": 86_400},
    {"retention": 1},
], ids=["other-purpose", "case", "trailing-space", "kept-a-day", "kept-at-all"])
async def test_a_remembered_yes_covers_only_what_was_asked(make_bridge, clock, changed):
    bridge = make_bridge()
    await bridge.handle(ASKED | {"task_id": "asked"}, "agent-a", DAY)
    clock.advance(2)  # the sensor's rate limit
    other = ASKED | changed
    assert bridge.consent_question("agent-a", other) is not None  # the person is asked again
    with pytest.raises(ConsentRequired):
        await bridge.handle(other, "agent-a")  # nobody could be asked: refused
    assert bridge.vault.retained("agent-a") == []  # and nothing was kept


async def test_the_same_request_reads_without_a_question(make_bridge, clock):
    bridge = make_bridge()
    await bridge.handle(ASKED, "agent-a", DAY)
    clock.advance(2)
    assert bridge.consent_question("agent-a", ASKED) is None
    assert (await bridge.handle(ASKED | {"scope": "minimal"}, "agent-a")).payload  # a narrower scope too


async def test_a_new_yes_for_another_purpose_is_remembered_for_that_one(make_bridge, clock):
    bridge = make_bridge()
    await bridge.handle(ASKED, "agent-a", DAY)
    clock.advance(2)
    await bridge.handle(ASKED | {"policy_tag": "weather-here", "retention": 60}, "agent-a", DAY)
    clock.advance(2)
    await bridge.handle(ASKED | {"policy_tag": "weather-here", "retention": 30}, "agent-a")  # kept less: fine


async def test_an_owners_grant_names_no_purpose_and_covers_any(make_bridge, clock):
    bridge = make_bridge()
    bridge.consents.grant("agent-a", SensorKind.location, Scope.standard)
    await bridge.handle(ASKED | {"policy_tag": "track-commute", "retention": 3600}, "agent-a")


async def test_a_purpose_bound_consent_does_not_hide_the_any_requester_grant(make_bridge, clock):
    bridge = make_bridge()
    bridge.consents.grant(ANY_REQUESTER, SensorKind.location, Scope.standard)  # the owner's: any purpose
    await bridge.handle(ASKED, "agent-a", DAY)
    clock.advance(2)
    await bridge.handle(ASKED | {"policy_tag": "track-commute"}, "agent-a")


def test_a_stored_purpose_of_a_wrong_type_is_no_consent(tmp_path: Path):
    db = SensorDatabase(tmp_path)
    try:
        registry = ConsentRegistry(db)
        registry.grant("agent-a", SensorKind.location, Scope.standard, purpose="p", max_retention=0)
        db.execute("UPDATE sensor_consents SET max_retention = 'ten' WHERE requester = 'agent-a'")
        assert registry.current("agent-a", SensorKind.location) is None
        db.execute("UPDATE sensor_consents SET max_retention = -1 WHERE requester = 'agent-a'")
        assert registry.current("agent-a", SensorKind.location) is None
        db.execute("UPDATE sensor_consents SET max_retention = 0, purpose = x'70' WHERE requester='agent-a'")
        assert registry.current("agent-a", SensorKind.location) is None
        db.execute("UPDATE sensor_consents SET purpose = '' WHERE requester = 'agent-a'")
        assert registry.current("agent-a", SensorKind.location) is None
        db.execute("UPDATE sensor_consents SET purpose = 'p' WHERE requester = 'agent-a'")
        assert registry.current("agent-a", SensorKind.location) is not None  # the row as granted
    finally:
        db.close()
