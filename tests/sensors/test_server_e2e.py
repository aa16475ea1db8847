"""End to end over MCP with the real ``mcp.Client`` in-process, both protocol eras: the sensors server on
its own, and through Sentinel's gateway (mounted as the ``sensors`` built-in), consent asked by elicitation.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.types import ElicitResult

from device_tools.sensors.server import create_server
from sentinel_mcp.config import ConfigError, parse_config
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.core.call_meta import PRINCIPAL_KEY

pytestmark = [pytest.mark.timeout(60), pytest.mark.parametrize("mode", ["legacy", "auto"])]

READ = {"sensor": "location", "scope": "standard", "policy_tag": "location-for-search", "task_id": "task-123"}


class User:
    """An MCP client's user answering consent questions."""

    def __init__(self, action: str = "accept", content: dict | None = None) -> None:
        self.action, self.content, self.questions = action, content, []

    async def __call__(self, context, params):
        self.questions.append(params.message)
        return ElicitResult(action=self.action, content=self.content if self.action == "accept" else None)


def server(tmp_path: Path, **settings):
    return create_server(BuiltinContext(name="sensors", data_dir=tmp_path / "sensors", settings=settings))


async def test_read_with_consent_by_elicitation(tmp_path, mode):
    user = User(content={"allow": True, "remember": "this request only"})
    async with Client(server(tmp_path), mode=mode, elicitation_callback=user) as c:
        r = await c.call_tool("sensor_read", READ)
        assert not r.is_error
        assert r.structured_content["payload"] == {
            "latitude": pytest.approx(r.structured_content["payload"]["latitude"]),
            "longitude": r.structured_content["payload"]["longitude"],
        }
        assert r.structured_content["redactions"] == ["Rounded to street-level precision", "Removed altitude"]
        assert r.structured_content["task_id"] == "task-123"
        assert user.questions == [
            "Allow local to read your location at standard scope for location-for-search "
            "(kept for 300 s)?"]
        await c.call_tool("sensor_read", READ)  # once only: asked again
        assert len(user.questions) == 2


async def test_remembered_consent_is_not_asked_again(tmp_path, mode):
    user = User(content={"allow": True, "remember": "1 hour"})
    async with Client(server(tmp_path), mode=mode, elicitation_callback=user) as c:
        assert not (await c.call_tool("sensor_read", READ)).is_error
        r = await c.call_tool("sensor_read", READ)
        assert r.is_error and r.structured_content["error"] == "throttled"  # 1 Hz, and no second question
        assert r.structured_content["retry_after"] > 0
        assert len(user.questions) == 1
        listed = (await c.call_tool("sensor_consent", {"action": "list"})).structured_content["consents"]
        assert [(x["requester"], x["sensor"], x["scope"], x["granted_by"]) for x in listed] == [
            ("local", "location", "standard", "elicitation")
        ]


async def test_declined_consent_returns_no_data(tmp_path, mode):
    user = User("decline")
    async with Client(server(tmp_path), mode=mode, elicitation_callback=user) as c:
        r = await c.call_tool("sensor_read", READ)
        assert r.is_error and r.structured_content["error"] == "consent_declined"
        assert "payload" not in r.structured_content
        r = await c.call_tool("sensor_read", READ | {"scope": "detailed"})
        assert r.is_error and len(user.questions) == 2


async def test_client_without_elicitation_gets_how_to_grant(tmp_path, mode):
    async with Client(server(tmp_path), mode=mode) as c:
        r = await c.call_tool("sensor_read", READ)
        assert r.is_error and r.structured_content["error"] == "consent_required"
        assert (
            "sentinel-mcp sensors consent grant location --requester local --scope standard"
            in r.structured_content["message"]
        )
        r = await c.call_tool(
            "sensor_consent", {"action": "grant", "sensor": "location", "scope": "detailed"}
        )
        assert r.is_error and "needs the user" in r.structured_content["message"]  # no self-granting


async def test_grant_by_tool_is_confirmed_by_the_user_and_scoped_to_the_caller(tmp_path, mode):
    user = User(content={"confirm": True})
    srv = server(tmp_path)
    async with Client(srv, mode=mode, elicitation_callback=user) as c:
        r = await c.call_tool(
            "sensor_consent",
            {
                "action": "grant",
                "sensor": "location",
                "scope": "detailed",
                "requester": "agent-a",
                "expires_in": 600,
            },
        )
        assert not r.is_error and r.structured_content["granted"]["scope"] == "detailed"
        assert user.questions == ["Grant agent-a access to your location at detailed scope for 600 s?"]
        meta = {PRINCIPAL_KEY: "agent-a"}  # the gateway forwards the caller's principal like this
        r = await c.call_tool("sensor_read", READ | {"scope": "detailed"}, meta=meta)
        assert not r.is_error and r.structured_content["redactions"] == []
        assert set(r.structured_content["payload"]) >= {
            "latitude",
            "longitude",
            "altitude",
            "horizontalAccuracy",
            "verticalAccuracy",
        }
        assert len(user.questions) == 1  # stored consent: no question for the read
        kept = (await c.call_tool("sensor_retained", {}, meta=meta)).structured_content["readings"]
        assert [k["response"]["task_id"] for k in kept] == ["task-123"]
        assert (await c.call_tool("sensor_retained", {})).structured_content["readings"] == []  # others' data
        r = await c.call_tool("sensor_consent", {"action": "revoke", "sensor": "location"}, meta=meta)
        assert r.structured_content["revoked"] == 1
    declined = User(content={"confirm": False})
    async with Client(srv, mode=mode, elicitation_callback=declined) as c:
        r = await c.call_tool("sensor_consent", {"action": "grant", "sensor": "battery"})
        assert r.is_error and r.structured_content["error"] == "consent_declined"


async def test_bad_arguments_never_crash_the_server(tmp_path, mode):
    user = User(content={"allow": True})
    async with Client(server(tmp_path), mode=mode, elicitation_callback=user) as c:
        for args, text in [
            ({"sensor": "thermometer", "policy_tag": "x"}, "unknown sensor 'thermometer'"),
            ({"sensor": "location", "scope": "gps", "policy_tag": "x"}, "unknown scope 'gps'"),
            ({"sensor": "location", "policy_tag": ""}, "policy_tag"),
            ({"sensor": "location", "policy_tag": "x", "retention": "forever"}, "retention"),
            ({"sensor": "location", "policy_tag": "x", "rate": 50}, "exceeds the location maximum"),
            ({"policy_tag": "x"}, "sensor"),
        ]:
            r = await c.call_tool("sensor_read", args)
            assert r.is_error, args
            assert text in r.content[0].text, (args, r.content[0].text)
        assert user.questions == []  # nothing asked about an invalid request
        r = await c.call_tool("sensor_consent", {"action": "explode"})
        assert r.is_error and "unknown action" in r.content[0].text
        r = await c.call_tool("sensor_consent", {"action": "grant", "sensor": "x-ray"})
        assert r.is_error and "unknown sensor" in r.content[0].text
        r = await c.call_tool("sensor_consent", {"action": "grant", "sensor": "battery", "expires_in": -5})
        assert r.is_error and "expires_in must be a positive" in r.content[0].text
        r = await c.call_tool("sensor_consent", {"action": "grant"})
        assert r.is_error and "grant needs a sensor" in r.content[0].text
        assert user.questions == []
        listing = (await c.call_tool("sensor_list", {})).structured_content
        assert listing["source"] == "simulated"
        available = {s["sensor"] for s in listing["sensors"] if s["available"]}
        assert available == {
            "location",
            "battery",
            "motion",
            "compass",
            "ambient_light",
            "barometer",
            "nearby_devices",
        }


async def test_missing_source_is_reported_by_list_and_read(tmp_path, mode):
    empty = tmp_path / "no-termux"
    empty.mkdir()
    srv = server(tmp_path, source="termux", termux_bin_dir=str(empty))
    async with Client(srv, mode=mode, elicitation_callback=User(content={"allow": True})) as c:
        listing = (await c.call_tool("sensor_list", {})).structured_content
        assert "not found" in listing["error"] and "pkg install termux-api" in listing["error"]
        assert not any(s["available"] for s in listing["sensors"])
        r = await c.call_tool("sensor_read", READ)
        assert r.is_error and r.structured_content["error"] == "source_unavailable"


def test_bad_settings_name_the_key(tmp_path, mode):
    with pytest.raises(ConfigError, match="sentinel.sensors.source"):
        server(tmp_path, source="satellite")
    with pytest.raises(ConfigError, match="sentinel.sensors.adb_port"):
        server(tmp_path, adb_port=70000)
    with pytest.raises(ConfigError, match="sentinel.sensors.colour"):
        server(tmp_path, colour="blue")
    with pytest.raises(ConfigError, match="default_retention must not exceed max_retention"):
        server(tmp_path, default_retention=7200, max_retention=3600)


async def test_through_the_sentinel_gateway(tmp_path, mode):
    from sentinel_mcp.app.runtime import running_gateway

    config = parse_config(
        {"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path), "builtins": ["sensors"]}},
        source="<test>",
        base_dir=tmp_path,
    )
    user = User(content={"allow": True, "remember": "1 day"})
    async with running_gateway(config) as rt:
        assert not rt.problems
        async with Client(rt.front.server, mode=mode, elicitation_callback=user) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert {"sensors__sensor_read", "sensors__sensor_list", "sensors__sensor_consent"} <= names
            r = await c.call_tool("sensors__sensor_read", READ)
            assert not r.is_error, r.content
            assert r.structured_content["redactions"] == [
                "Rounded to street-level precision",
                "Removed altitude",
            ]
            assert any("to read your location at standard scope" in q for q in user.questions)
    # the consent and the audit row landed in the built-in's own store under the gateway's data dir
    from device_tools.sensors.audit_log import AuditLog
    from device_tools.sensors.database import SensorDatabase

    db = SensorDatabase(tmp_path / "sensors")
    try:
        rows = AuditLog(db).rows()
        assert [(r["sensor"], r["decision"], r["policy_tag"]) for r in rows] == [
            ("location", "allowed", "location-for-search")
        ]
    finally:
        db.close()
    # ... and points to the gateway's decision for that call: one decision log
    from tests.agent.audit_rows import audit_rows

    [(decision_id,)] = audit_rows(tmp_path, "decision_id", "tool = 'sensors__sensor_read'")
    assert decision_id and rows[0]["decision_id"] == decision_id


async def test_server_sweeps_expired_readings_while_connected(tmp_path, mode):
    import anyio

    from device_tools.sensors.consent_registry import ConsentRegistry
    from device_tools.sensors.database import SensorDatabase
    from sentinel_mcp.core.sensor_kinds import Scope, SensorKind

    other = SensorDatabase(tmp_path / "sensors")  # a second connection, as the CLI would open
    try:
        ConsentRegistry(other).grant("local", SensorKind.barometer, Scope.minimal)
        async with Client(server(tmp_path, sweep_interval=0.05), mode=mode) as c:
            r = await c.call_tool(
                "sensor_read", {"sensor": "barometer", "policy_tag": "weather", "retention": 1}
            )
            assert not r.is_error
            assert other.query("SELECT COUNT(*) AS n FROM sensor_readings")[0]["n"] == 1
            with anyio.fail_after(20):  # bound only; the sweeper deletes it once its second is over
                while other.query("SELECT COUNT(*) AS n FROM sensor_readings")[0]["n"]:
                    await anyio.sleep(0.05)
    finally:
        other.close()


async def test_concurrent_flood_through_mcp(tmp_path, mode):
    import anyio

    user = User(content={"allow": True, "remember": "1 hour"})
    async with Client(server(tmp_path), mode=mode, elicitation_callback=user) as c:
        assert not (await c.call_tool("sensor_read", READ)).is_error
        results = []

        async def one():
            results.append(await c.call_tool("sensor_read", READ))

        async with anyio.create_task_group() as tg:
            for _ in range(50):
                tg.start_soon(one)
        errors = {r.structured_content["error"] for r in results if r.is_error}
        assert errors <= {"throttled"} and len(results) == 50
        assert (await c.call_tool("sensor_list", {})).structured_content[
            "source"
        ] == "simulated"  # still serving


async def test_a_principal_manages_only_its_own_consents(tmp_path, mode):
    user = User(content={"confirm": True})
    srv = server(tmp_path)
    async with Client(srv, mode=mode, elicitation_callback=user) as c:  # the local owner grants agent-a
        r = await c.call_tool(
            "sensor_consent", {"action": "grant", "sensor": "location", "requester": "agent-a"}
        )
        assert not r.is_error
        b = {PRINCIPAL_KEY: "agent-b"}
        for args in (
            {"action": "revoke", "requester": "agent-a"},
            {"action": "list", "requester": "agent-a"},
            {"action": "grant", "sensor": "location", "requester": "agent-b-friend"},
        ):
            r = await c.call_tool("sensor_consent", args, meta=b)
            assert r.is_error and r.structured_content["error"] == "forbidden", args
        listed = await c.call_tool("sensor_consent", {"action": "list"}, meta=b)
        assert listed.structured_content["consents"] == []  # agent-b sees its own (none), not agent-a's
        listed = await c.call_tool("sensor_consent", {"action": "list"}, meta={PRINCIPAL_KEY: "agent-a"})
        assert [x["requester"] for x in listed.structured_content["consents"]] == ["agent-a"]
        user.action = "decline"
        r = await c.call_tool("sensor_read", READ, meta=b)
        assert r.is_error  # agent-a's consent is not agent-b's (and agent-b's user says no)
        r = await c.call_tool("sensor_read", READ | {"scope": "minimal"}, meta={PRINCIPAL_KEY: "agent-a"})
        assert not r.is_error  # agent-a's own consent needs no question


@pytest.mark.parametrize(
    "content",
    [
        {"allow": "true"},
        {"allow": "yes"},
        {"allow": 1},
        {"allow": None},
        {"allow": True, "remember": "forever"},
        {"allow": True, "extra": 1},
        {},
    ],
)
async def test_consent_is_json_true_and_nothing_else(tmp_path, mode, content):
    user = User(content=content)
    async with Client(server(tmp_path), mode=mode, elicitation_callback=user) as c:
        r = await c.call_tool("sensor_read", READ)
        assert r.is_error and "payload" not in (r.structured_content or {}), r
        listed = (await c.call_tool("sensor_consent", {"action": "list"})).structured_content["consents"]
        assert listed == []
    assert len(user.questions) == 1


async def test_consent_question_shows_the_requester_safely(tmp_path, mode):
    from mcp.types import Implementation

    from sentinel_mcp.app.runtime import running_gateway

    # the requester is the caller's principal as the gateway forwards it; whatever its text, it is shown
    # safely
    user = User(content={"allow": True})
    async with Client(server(tmp_path), mode=mode, elicitation_callback=user) as c:
        r = await c.call_tool("sensor_read", READ, meta={PRINCIPAL_KEY: "weather\u202eknab\u200b\x1b[2K"})
        assert not r.is_error
    [question] = user.questions
    assert not any(ch in question for ch in "\u202e\u200b\x1b"), question
    assert "weather⟨U+202E⟩knab⟨U+200B⟩" in question or "weather\\u202eknab" in question, question

    # through the gateway, a client's self-chosen name is not the requester (its principal is), nor shown raw
    config = parse_config(
        {"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path / "gw"), "builtins": ["sensors"]}},
        source="<test>",
        base_dir=tmp_path,
    )
    user = User(content={"allow": True})
    sly = Implementation(name="weather\u202eknab\u200b\x1b[2K", version="1")
    async with running_gateway(config) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=user, client_info=sly) as c:
            assert not (await c.call_tool("sensors__sensor_read", READ)).is_error
    [question] = user.questions
    assert not any(ch in question for ch in "\u202e\u200b\x1b"), question
    assert question.startswith("Allow owner to read") and "weather" not in question, question
