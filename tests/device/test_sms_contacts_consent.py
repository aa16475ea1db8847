"""device__sms_send to a contact's name reads the contacts: through the real gateway it needs the caller's
contacts consent, exactly as contacts_search does, and without it only a phone number the caller gave is
taken. A result of an action that was not done (declined, unanswered) never carries what Sentinel derived from
the owner's data (a contact's number), not in its decision, its digest nor its text.

The gateway runs in a subprocess over HTTP with principals (bob may call device__*), the phone is the fake adb
server (the simulated phone with its real uiautomator screens) in this process, so the test sees every command
the phone received: without consent, not even the contacts query."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult

from device_tools.actions import ProposedAction
from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.core.phone_numbers import is_phone_number
from sentinel_mcp.gateway.consent_gate import personal_kinds
from sentinel_mcp.paths import RULEBASES_DIR
from tests.gateway.helpers import sentinel_http
from tests.device.device_helpers import Answers, connect, sim_server
from tests.identity.identity_rig import User

pytestmark = pytest.mark.timeout(180)
OWNER = "owner-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef00"
ALICE_NUMBER = "+15550100"
# every spelling of the contacts' numbers a result could leak
NUMBERS = ("+15550100", "15550100", "5550100", "+15550111", "5550111", "+15550199", "5550199")
NAMES = ["Alice", "alice", "ALICE", " Alice ", "Bob", "Mom", "a", "Al", "Nobody", "Alice\n", "Ali ce",
         "+1555 Alice", "555-CALL-ALICE", "Alice; +15550100"]
CONTACTS_QUERY = "content query --uri content://com.android.contacts"


@contextlib.contextmanager
def gateway(tmp_path: Path, fake_adb):
    config = {"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp_path / "state"),
        "builtins": ["device"],
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
        "http": {"token": OWNER},
        "device": {"backend": "adb", "serial": fake_adb.serial, "adb_port": fake_adb.port,
                   "risk_classifier": "rules", "confirm_timeout": 2, "dump_backoff": 0},
        "principals": [{"name": "bob", "token": BOB, "tools": ["device__*"]}],
    }}
    with sentinel_http(tmp_path, config) as url:
        yield url.removesuffix("/mcp")


@contextlib.asynccontextmanager
async def client(base: str, token: str, user: Any = None):
    """A principal's client; without ``user`` it cannot be asked anything (no elicitation)."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    kwargs = {"elicitation_callback": user} if user is not None else {}
    async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy", **kwargs) as c:
        yield c


def everything(result: Any) -> str:
    """All a caller receives: the text, the structured content and the _meta."""
    return json.dumps({"content": [getattr(c, "text", "") for c in result.content],
                       "structured": result.structured_content, "meta": result.meta})


def contacts_reads(fake_adb) -> list[str]:
    return [c for c in fake_adb.device_commands() if c.startswith(CONTACTS_QUERY)]


async def test_without_contacts_consent_a_name_reads_nothing_and_tells_nothing(tmp_path, fake_adb):
    with gateway(tmp_path, fake_adb) as base:
        async with client(base, BOB) as bob:  # bob's client cannot answer: no consent, no confirmation
            search = await bob.call_tool("device__contacts_search", {"query": "a"})
            assert search.is_error and "consent is needed" in everything(search)
            for to in NAMES:
                r = await bob.call_tool("device__sms_send", {"to": to, "body": "hello"})
                seen = everything(r)
                assert r.is_error, (to, seen)
                # a line break is no name's: device.pl refuses its shape before any consent (reads nothing)
                refused_shape = "\n" in to and "to must be a phone number or a contact name" in seen
                assert refused_shape or ("consent is needed" in seen and "contacts" in seen), (to, seen)
                for number in NUMBERS:
                    assert number in to or number not in seen, (to, number, seen)  # only what it gave
                assert "match" not in seen, (to, seen)  # nor how many contacts match
            assert contacts_reads(fake_adb) == []  # the phone was never asked
            # a number the caller gives needs no contacts consent: it reaches the phone, which asks the person
            # (bob cannot answer, so it is denied) and shows the number the caller gave, nothing else
            given = await bob.call_tool("device__sms_send", {"to": "+1 555 0123", "body": "hello"})
            assert given.is_error and "Nothing was sent" in everything(given)
            shown = given.structured_content["decision"]["action"]["details"]
            assert shown == {"to": "+15550123", "name": ""}
        assert contacts_reads(fake_adb) == []
    assert fake_adb.device.sent_messages == []
    assert not any(c.startswith(("am start", "input ")) for c in fake_adb.device_commands())


async def test_with_contacts_consent_a_name_is_resolved_and_a_declined_send_still_hides_the_number(
    tmp_path, fake_adb
):
    with gateway(tmp_path, fake_adb) as base:
        consents = User(approve=True)  # allows the contacts read; the SMS question is answered below
        answered: list[str] = []

        async def person(ctx: Any, params: Any):
            props = (params.requested_schema or {}).get("properties", {})
            answered.append(params.message)
            if "confirm" in props:  # the phone's own question: no
                return ElicitResult(action="accept", content={"confirm": False})
            return await consents(ctx, params)

        async with client(base, BOB, person) as bob:
            r = await bob.call_tool("device__sms_send", {"to": "Alice", "body": "See you at 7"})
        assert any("read your contacts" in q for q in answered), answered
        assert any("Send an SMS to Alice (+15550100)" in q for q in answered), answered  # the person sees it
        seen = everything(r)
        assert r.is_error and "declined" in seen
        for number in NUMBERS:  # the caller does not: the action was not done
            assert number not in seen, (number, seen)
        assert r.structured_content["decision"]["action"]["details"] == {}
        assert contacts_reads(fake_adb)  # with consent the name was looked up

        async with client(base, OWNER, User(approve=True)) as owner:
            sent = await owner.call_tool("device__sms_send", {"to": "alice", "body": "See you at 7"})
        assert not sent.is_error, everything(sent)
        assert sent.structured_content["to"] == ALICE_NUMBER  # done, with consent: the number is shown
    assert [(m.to, m.body) for m in fake_adb.device.sent_messages] == [(ALICE_NUMBER, "See you at 7")]


@pytest.mark.parametrize("to", NAMES)
async def test_a_declined_send_to_a_name_shows_only_what_the_caller_gave(tmp_path, to):
    """The device server alone (no gateway, no consent to check): the person declines, and the result holds
    neither the number nor a digest it could be guessed from; the device's own record keeps it all."""
    server = sim_server(tmp_path, risk_classifier="rules")
    async with connect(server, "legacy", Answers("no")) as c:
        r = await c.call_tool("sms_send", {"to": to, "body": "hello"})
    seen = everything(r)
    assert r.is_error
    for number in NUMBERS:
        assert number in to or number not in seen, (to, number, seen)  # only what the caller gave
    assert "match" not in seen  # not how many contacts match either
    decision = (r.structured_content or {}).get("decision")
    if decision is not None:  # the name was one contact's: asked, declined
        assert decision["action"]["details"] == {} and "derived" not in decision["action"]
        record = [json.loads(line) for line in (tmp_path / "decisions.jsonl").read_text().splitlines()]
        assert record[-1]["action"]["details"]["to"].startswith("+1555")  # the owner's record keeps it
        assert decision["digest"] != record[-1]["digest"]
    assert server.runtime.backend.sent_messages == []


@pytest.mark.parametrize("value,is_number", [
    ("+15550100", True), ("+1 (555) 010-0100", True), (" 5550100 ", True), ("555.0100", True),
    ("Alice", False), ("", False), ("12", False), ("+", False), ("555-CALL-NOW", False),
    ("+15550100; Alice", False), ("+15550100\nAlice", False), ("١٥٥٥٠١٠٠", False), (15550100, False),
    (["+15550100"], False), (None, False),
])
def test_the_gateway_and_the_tool_read_to_by_one_rule(value, is_number):
    tool = type("Tool", (), {"meta": {"sentinel/personal_names": {"to": "contacts"}}})()
    call = ToolCall(name="device__sms_send", server="device", tool="sms_send",
                    arguments={"to": value, "body": "hi"}, principal="bob")
    kinds = personal_kinds(tool, call, {})
    assert is_phone_number(value) == is_number
    assert kinds == ([] if is_number or value is None else [("contacts", False)])


def test_the_caller_view_of_an_action_drops_derived_details_only():
    action = ProposedAction(kind="sms_send", tool="sms_send", text="hi",
                            details={"to": ALICE_NUMBER, "name": "Alice"}, derived=["to", "name"])
    given = ProposedAction(kind="sms_send", tool="sms_send", text="hi",
                           details={"to": ALICE_NUMBER, "name": ""})
    assert action.for_caller() == {"kind": "sms_send", "tool": "sms_send", "text": "hi", "details": {}}
    assert action.for_classifier()["details"]["to"] == ALICE_NUMBER  # the risk check sees it all
    assert given.for_caller()["details"] == {"to": ALICE_NUMBER, "name": ""}
