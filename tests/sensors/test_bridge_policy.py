"""SensorBridge policy on real SQLite: consent, scope redaction, rate limits, retention, audit, bad input."""

from __future__ import annotations

import asyncio
import math

import pytest

from device_tools.sensors.bridge import SensorBridge, UserConsent
from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.errors import (
    ConsentDeclined,
    ConsentRequired,
    InvalidRequest,
    SourceUnavailable,
    Throttled,
)
from sentinel_mcp.core.sensor_kinds import MAX_RATE_HZ, Scope, SensorKind
from sentinel_mcp.core.sensor_messages import SensorRequest, SensorResponse

pytestmark = pytest.mark.timeout(30)


def req(sensor="location", scope="standard", **kw) -> dict:
    return {"sensor": sensor, "scope": scope, "policy_tag": kw.pop("policy_tag", "location-for-search"), **kw}


def grant(bridge: SensorBridge, sensor="location", scope="detailed", requester="agent-a", expires_in=None):
    bridge.consents.grant(requester, SensorKind(sensor), Scope(scope), expires_in)


# --- consent -----------------------------------------------------------------------------------------

async def test_no_consent_no_data(make_bridge):
    bridge = make_bridge()
    with pytest.raises(ConsentRequired, match="no consent for 'agent-a' to read location"):
        await bridge.handle(req(retention=600), "agent-a")
    assert bridge.vault.count_all() == 0
    rows = bridge.audit.rows()
    assert [(r["decision"], r["redactions"]) for r in rows] == [("denied", [])]


async def test_consent_is_per_requester_and_per_sensor(make_bridge):
    bridge = make_bridge()
    grant(bridge, "location", requester="agent-a")
    assert (await bridge.handle(req(), "agent-a")).payload
    with pytest.raises(ConsentRequired):
        await bridge.handle(req(), "agent-b")
    with pytest.raises(ConsentRequired):
        await bridge.handle(req("battery"), "agent-a")


async def test_consent_for_any_requester(make_bridge):
    bridge = make_bridge()
    grant(bridge, "battery", "minimal", requester="*")
    assert (await bridge.handle(req("battery", "minimal"), "whoever")).payload["percentage"] == 100.0


async def test_consent_expires_and_revokes(make_bridge, clock):
    bridge = make_bridge()
    grant(bridge, expires_in=60)
    await bridge.handle(req(), "agent-a")
    clock.advance(61)
    with pytest.raises(ConsentRequired):
        await bridge.handle(req(), "agent-a")
    grant(bridge)
    clock.advance(5)
    await bridge.handle(req(), "agent-a")
    assert bridge.consents.revoke("agent-a", SensorKind.location) == 1
    clock.advance(5)
    with pytest.raises(ConsentRequired):
        await bridge.handle(req(), "agent-a")


async def test_request_above_granted_scope_is_refused(make_bridge, clock):
    bridge = make_bridge()
    grant(bridge, scope="standard")
    with pytest.raises(ConsentRequired, match="covers scope 'standard' only"):
        await bridge.handle(req(scope="detailed"), "agent-a")
    assert (await bridge.handle(req(scope="minimal"), "agent-a")).redactions[
        0
    ] == "Rounded to city-level precision"


async def test_user_answer_once_remember_and_decline(make_bridge, clock):
    bridge = make_bridge()
    with pytest.raises(ConsentDeclined):
        await bridge.handle(req(), "agent-a", UserConsent(allow=False))
    with pytest.raises(ConsentDeclined):
        await bridge.handle(req(), "agent-a", "declined")
    await bridge.handle(req(), "agent-a", UserConsent(allow=True))  # this request only: nothing stored
    assert bridge.consents.list() == []
    clock.advance(1)
    await bridge.handle(req(), "agent-a", UserConsent(allow=True, remember="1 hour"))
    (stored,) = bridge.consents.list()
    assert (stored.scope, stored.granted_by, stored.expires_at - stored.granted_at) == (
        Scope.standard,
        "elicitation",
        3600,
    )
    assert bridge.consent_question("agent-a", req()) is None
    assert bridge.consent_question("agent-a", req(scope="detailed")) == (
        "Allow agent-a to read your location at detailed scope for location-for-search (kept for 300 s)?"
    )
    assert bridge.consent_question("agent-a", req(rate=99)) is None  # invalid: nothing to ask


# --- scope and redaction -----------------------------------------------------------------------------

LOCATION_SCOPES = [
    (
        "minimal",
        {"latitude": 37.0, "longitude": -122.0},  # the design's example, exactly
        ["Rounded to city-level precision", "Removed altitude"],
    ),
    (
        "standard",
        {"latitude": 37.77, "longitude": -122.42},
        ["Rounded to street-level precision", "Removed altitude"],
    ),
    (
        "detailed",
        {
            "latitude": 37.7749295,
            "longitude": -122.4194155,
            "altitude": 16.0,
            "horizontalAccuracy": 5.0,
            "verticalAccuracy": 3.0,
            "speed": 1.4,
            "bearing": 2.2,
            "provider": "gps",
            "ageSeconds": 0.0,
        },
        [],
    ),
]


@pytest.mark.parametrize("scope,payload,redactions", LOCATION_SCOPES)
async def test_location_scope_exact_redaction(make_bridge, scope, payload, redactions):
    bridge = make_bridge()
    grant(bridge)
    resp = await bridge.handle(req(scope=scope, task_id="task-123"), "agent-a")
    assert resp == SensorResponse(
        task_id="task-123", payload=payload, redactions=redactions, timestamp="2025-10-18T12:00:00Z"
    )
    (row,) = bridge.audit.rows()
    assert row["redactions"] == redactions and row["scope"] == scope


@pytest.mark.parametrize("scope", ["minimal", "standard"])
async def test_nothing_finer_than_the_scope_leaves(make_bridge, clock, scope):
    bridge = make_bridge()
    grant(bridge)
    places = {"minimal": 1, "standard": 2}[scope]
    for _ in range(20):  # along the walk, every coordinate is on the scope's grid
        clock.advance(97)
        resp = await bridge.handle(req(scope=scope), "agent-a")
        assert set(resp.payload) == {"latitude", "longitude"}
        for v in resp.payload.values():
            assert math.isclose(v, round(v, places), abs_tol=1e-12)


@pytest.mark.parametrize(
    "scope,keys,redactions",
    [
        (
            "minimal",
            {"percentage"},
            ["Removed charging state", "Removed battery health, temperature and voltage"],
        ),
        (
            "standard",
            {"percentage", "charging", "status", "plugged"},
            ["Removed battery health, temperature and voltage"],
        ),
        (
            "detailed",
            {
                "percentage",
                "charging",
                "status",
                "plugged",
                "health",
                "temperature_c",
                "voltage_mv",
                "technology",
                "present",
            },
            [],
        ),
    ],
)
async def test_battery_scopes(make_bridge, scope, keys, redactions):
    bridge = make_bridge()
    grant(bridge, "battery")
    resp = await bridge.handle(req("battery", scope), "agent-a")
    assert set(resp.payload) == keys and resp.redactions == redactions


async def test_nearby_devices_scopes_hide_identifiers(make_bridge):
    bridge = make_bridge()
    grant(bridge, "nearby_devices")
    minimal = await bridge.handle(req("nearby_devices", "minimal"), "agent-a")
    assert minimal.payload == {"count": 3} and minimal.redactions == ["Removed device list"]
    bridge.limiter = type(bridge.limiter)(lambda: 1e9)  # fresh limiter: this test is about scope
    standard = await bridge.handle(req("nearby_devices", "standard"), "agent-a")
    assert "address" not in str(standard.payload) and "name" not in str(standard.payload)
    assert standard.redactions == ["Removed device names", "Removed device addresses"]


@pytest.mark.parametrize("sensor", ["motion", "compass", "ambient_light", "barometer"])
async def test_sensors_without_scope_levels_have_no_redactions(make_bridge, clock, sensor):
    bridge = make_bridge()
    grant(bridge, sensor, "minimal")
    resp = await bridge.handle(req(sensor, "minimal"), "agent-a")
    assert resp.redactions == [] and resp.payload
    clock.advance(1)
    # no scope levels ("N/A" in the design): a minimal grant covers any requested scope, same payload keys
    detailed = await bridge.handle(req(sensor, "detailed"), "agent-a")
    assert detailed.redactions == [] and set(detailed.payload) == set(resp.payload)
    assert bridge.consent_question("agent-b", req(sensor)) == (
        f"Allow agent-b to read your {sensor} for location-for-search (kept for 300 s)?")


# --- rate limits -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sensor", ["location", "motion", "compass", "ambient_light", "barometer", "nearby_devices"]
)
async def test_rate_limit_per_sensor(make_bridge, clock, sensor):
    bridge = make_bridge()
    grant(bridge, sensor)
    interval = 1.0 / MAX_RATE_HZ[SensorKind(sensor)]
    await bridge.handle(req(sensor), "agent-a")
    with pytest.raises(Throttled) as e:
        await bridge.handle(req(sensor), "agent-a")
    assert e.value.retry_after == pytest.approx(interval)
    assert e.value.to_dict()["error"] == "throttled"
    clock.advance(interval)
    await bridge.handle(req(sensor), "agent-a")


async def test_sensors_are_limited_independently(make_bridge):
    bridge = make_bridge()
    for s in ("location", "battery", "compass"):
        grant(bridge, s)
        await bridge.handle(req(s), "agent-a")  # no throttling across different sensors


async def test_requester_rate_and_device_rate(make_bridge, clock):
    bridge = make_bridge()
    grant(bridge, requester="agent-a")
    grant(bridge, requester="agent-b")
    await bridge.handle(req(rate=0.5), "agent-a")
    with pytest.raises(Throttled) as e:
        await bridge.handle(req(), "agent-b")  # the device's 1 Hz is shared
    assert e.value.retry_after == pytest.approx(1.0)
    clock.advance(1.0)
    await bridge.handle(req(), "agent-b")
    clock.advance(0.5)
    with pytest.raises(Throttled) as e:
        await bridge.handle(req(rate=0.5), "agent-a")  # its own 0.5 Hz: 2 s between reads
    assert e.value.retry_after == pytest.approx(0.5)


async def test_rate_above_the_sensor_maximum_is_invalid(make_bridge):
    bridge = make_bridge()
    grant(bridge)
    with pytest.raises(InvalidRequest, match="exceeds the location maximum of 1 Hz"):
        await bridge.handle(req(rate=5), "agent-a")


async def test_flood_of_requests(make_bridge):
    bridge = make_bridge()
    grant(bridge)
    results = await asyncio.gather(
        *(bridge.handle(req(), "agent-a") for _ in range(200)), return_exceptions=True
    )
    assert sum(isinstance(r, SensorResponse) for r in results) == 1
    assert sum(isinstance(r, Throttled) for r in results) == 199
    decisions = [r["decision"] for r in bridge.audit.rows(limit=1000)]
    assert len(decisions) == 200 and decisions.count("throttled") == 199


# --- retention ---------------------------------------------------------------------------------------


async def test_reading_gone_after_retention(make_bridge, clock):
    bridge = make_bridge()
    grant(bridge)
    resp = await bridge.handle(req(retention=60, task_id="t-1"), "agent-a")
    (kept,) = bridge.vault.retained("agent-a")
    assert kept["response"] == resp.model_dump()
    clock.advance(59)
    assert len(bridge.vault.retained(task_id="t-1")) == 1
    clock.advance(1)
    assert bridge.vault.retained() == []  # never served once expired, even before a sweep
    assert bridge.vault.sweep() == 1 and bridge.vault.count_all() == 0


async def test_retention_zero_stores_nothing_and_default_applies(make_bridge):
    bridge = make_bridge(default_retention=120)
    grant(bridge)
    await bridge.handle(req(retention=0), "agent-a")
    assert bridge.vault.count_all() == 0
    bridge.limiter = type(bridge.limiter)(lambda: 1e9)
    await bridge.handle(req(), "agent-a")
    (kept,) = bridge.vault.retained()
    assert kept["expires_at"] == pytest.approx(bridge.audit.rows()[-1]["at"] + 120)


async def test_retention_above_maximum_is_invalid(make_bridge):
    bridge = make_bridge(max_retention=3600)
    grant(bridge)
    with pytest.raises(InvalidRequest, match="exceeds the maximum of 3600 s"):
        await bridge.handle(req(retention=3601), "agent-a")


async def test_retention_survives_a_restart(tmp_path, clock):
    from device_tools.sensors.sources.simulated import SimulatedSource

    db = SensorDatabase(tmp_path / "sensors")
    bridge = SensorBridge(SimulatedSource(clock), db, clock=clock, monotonic=clock)
    grant(bridge)
    await bridge.handle(req(retention=30, task_id="short"), "agent-a")
    clock.advance(1)
    await bridge.handle(req(retention=3600, task_id="long"), "agent-a")
    db.close()  # the server stops

    clock.advance(60)  # time passes while nothing runs
    db2 = SensorDatabase(tmp_path / "sensors")
    bridge2 = SensorBridge(SimulatedSource(clock), db2, clock=clock, monotonic=clock)
    assert bridge2.vault.count_all() == 1  # swept at start: the expired row is physically gone
    assert [r["response"]["task_id"] for r in bridge2.vault.retained()] == ["long"]
    assert bridge2.consents.current("agent-a", SensorKind.location) is not None  # consent persisted too
    db2.close()


async def test_periodic_sweeper_deletes_expired_rows(make_bridge, clock):
    bridge = make_bridge()
    grant(bridge)
    await bridge.handle(req(retention=10), "agent-a")
    clock.advance(11)
    assert bridge.vault.count_all() == 1
    task = asyncio.create_task(bridge.vault.run_sweeper(0.01))
    try:
        for _ in range(500):
            if bridge.vault.count_all() == 0:
                break
            await asyncio.sleep(0.01)
        assert bridge.vault.count_all() == 0
    finally:
        task.cancel()


# --- audit and bad input -----------------------------------------------------------------------------


async def test_one_audit_row_per_request_with_every_field(make_bridge, clock):
    bridge = make_bridge()
    grant(bridge, scope="standard")
    await bridge.handle(req(task_id="t1", policy_tag="search"), "agent-a")  # allowed
    with pytest.raises(Throttled):
        await bridge.handle(req(task_id="t2", policy_tag="search"), "agent-a")
    with pytest.raises(ConsentRequired):
        await bridge.handle(req(scope="detailed", task_id="t3", policy_tag="nav"), "agent-a")
    with pytest.raises(InvalidRequest):
        await bridge.handle(req("thermometer", task_id="t4"), "agent-a")
    rows = bridge.audit.rows()
    assert [(r["task_id"], r["decision"]) for r in rows] == [
        ("t1", "allowed"),
        ("t2", "throttled"),
        ("t3", "denied"),
        ("t4", "invalid"),
    ]
    first = rows[0]
    assert (first["requester"], first["sensor"], first["scope"], first["policy_tag"]) == (
        "agent-a",
        "location",
        "standard",
        "search",
    )
    assert first["redactions"] == ["Rounded to street-level precision", "Removed altitude"]
    assert first["time"] == "2025-10-18T12:00:00Z" and first["retention"] == 300
    assert rows[3]["sensor"] == "thermometer"


@pytest.mark.parametrize(
    "bad,message",
    [
        (req("thermometer"), "unknown sensor 'thermometer'"),
        (req(scope="gps"), "unknown scope 'gps'"),
        ({"sensor": "location", "scope": "standard"}, "policy_tag: Field required"),
        (req(policy_tag=""), "policy_tag"),
        (req(retention="forever"), "retention"),
        (req(retention=-1), "retention"),
        (req(rate=-2), "rate"),
        (req(rate=float("nan")), "rate"),
        (req(sensor=None), "sensor"),
        (req(sensor=["location"]), "sensor"),
        (req(colour="blue"), "colour: Extra inputs are not permitted"),
    ],
)
async def test_bad_requests_are_clear_errors(make_bridge, bad, message):
    bridge = make_bridge()
    grant(bridge)
    with pytest.raises(InvalidRequest, match=message.replace("(", r"\(")):
        await bridge.handle(bad, "agent-a")
    (row,) = bridge.audit.rows()
    assert row["decision"] == "invalid"
    assert bridge.vault.count_all() == 0


async def test_a_source_bug_is_contained(make_bridge):
    class BrokenSource:  # a source with a bug (not a device double): the bridge must contain it
        name = "broken"

        async def read(self, sensor):
            raise ZeroDivisionError("division by zero")

    bridge = make_bridge(BrokenSource())
    grant(bridge)
    with pytest.raises(SourceUnavailable, match="broken could not read location") as e:
        await bridge.handle(req(), "agent-a")
    assert "division" not in e.value.message  # the bug's own text stays inside (it could quote output)
    assert bridge.audit.rows()[0]["decision"] == "failed"


async def test_sensor_the_source_lacks(make_bridge):
    bridge = make_bridge()
    grant(bridge, "camera")
    from device_tools.sensors.errors import SensorUnsupported

    with pytest.raises(SensorUnsupported, match="cannot read camera"):
        await bridge.handle(req("camera"), "agent-a")
    listing = await bridge.sensor_list()
    assert {s["sensor"]: s["available"] for s in listing["sensors"]}["camera"] is False


def test_sensor_request_shape_is_the_designs():
    r = SensorRequest.model_validate(
        {
            "task_id": "task-123",
            "sensor": "location",
            "scope": "standard",
            "retention": 300,
            "rate": 1.0,
            "policy_tag": "location-for-search",
        }
    )
    assert r.model_dump(mode="json") == {
        "task_id": "task-123",
        "sensor": "location",
        "scope": "standard",
        "retention": 300,
        "rate": 1.0,
        "policy_tag": "location-for-search",
        "max_age": None,  # beside the design's: the oldest location fix the requester takes (none: any age)
    }
    assert set(SensorResponse.model_fields) == {"task_id", "payload", "redactions", "timestamp"}
