"""The device firewall's records: typed, redacted, pointing to the gateway's decision log (``decision_id``),
and written before anything reaches the phone: a record that cannot be written refuses the action."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from tests.agent.audit_rows import audit_rows
from tests.device.device_helpers import Answers, connect, element, sim_server, snapshot_id
from tests.device.test_through_gateway import device_config

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.decision_record import Outcome

pytestmark = pytest.mark.timeout(90)
MODES = ["legacy", "auto"]


async def open_messages(client) -> tuple:
    home = await client.call_tool("screen_read", {})
    listed = await client.call_tool("click", {"element_id": element(home, text="Messages")["id"],
                                              "snapshot_id": snapshot_id(home)})
    return home, listed


@pytest.mark.parametrize("mode", MODES)
async def test_an_unwritable_record_refuses_every_action_and_sends_nothing(tmp_path, mode):
    (tmp_path / "decisions.jsonl").mkdir()  # the record cannot be appended (a real OS error, not a double)
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    answers = Answers("yes", "yes")
    async with connect(server, mode, answers) as client:
        home, listed = await open_messages(client)  # low risk: no question, still refused
        assert listed.is_error and "could not be recorded" in listed.content[0].text
        assert "Nothing was sent" in listed.content[0].text
        assert phone.screen == "home"
        back = await client.call_tool("press_back", {})
        assert back.is_error and "could not be recorded" in back.content[0].text
    assert phone.sent_messages == []


@pytest.mark.parametrize("mode", MODES)
async def test_records_are_typed_redacted_and_written_before_the_phone_acts(tmp_path, mode):
    server = sim_server(tmp_path)
    answers = Answers("yes")
    async with connect(server, mode, answers) as client:
        home, listed = await open_messages(client)
        convo = await client.call_tool("click", {"element_id": element(listed, text="Alice")["id"],
                                                 "snapshot_id": snapshot_id(listed)})
        field = element(convo, resource_id="compose_message_text")
        typed = await client.call_tool("type_text", {
            "element_id": field["id"], "snapshot_id": snapshot_id(convo),
            "text": "your code is 493817, card 4111 1111 1111 1111"})
        assert not typed.is_error, typed.content[0].text
    rows = [json.loads(line) for line in (tmp_path / "decisions.jsonl").read_text().splitlines()]
    assert rows and all(r["area"] == "device" and Outcome(r["outcome"]) for r in rows)
    assert all(r["decision_id"] == "" for r in rows)  # standalone: no gateway decision to point to
    text = (tmp_path / "decisions.jsonl").read_text()
    assert "493817" not in text and "4111 1111 1111 1111" not in text
    # each action: approved (before anything is sent), then its outcome
    outcomes = [r["outcome"] for r in rows]
    assert outcomes == ["approved", "allowed"] * (len(rows) // 2), outcomes


@pytest.mark.parametrize("mode", MODES)
async def test_through_the_gateway_each_record_points_to_its_decision(tmp_path, mode):
    forged = "forged-decision-0123456789"
    async with running_gateway(device_config(tmp_path)) as rt:
        assert not rt.problems, rt.problems
        async with Client(rt.front.server, mode=mode, elicitation_callback=Answers()) as c:
            home = await c.call_tool("device__screen_read", {})
            clicked = await c.call_tool("device__click", {"element_id": element(home, text="Messages")["id"],
                                                          "snapshot_id": snapshot_id(home)},
                                        meta={"sentinel/decision_id": forged})  # a client's claim: dropped
            assert not clicked.is_error, clicked.content[0].text
    [log] = [p for p in tmp_path.rglob("decisions.jsonl")]
    assert forged not in log.read_text()
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["outcome"] for r in rows] == ["approved", "allowed"]
    [(decision_id,)] = audit_rows(tmp_path, "decision_id", "tool = 'device__click'")
    assert decision_id and all(r["decision_id"] == decision_id for r in rows)
