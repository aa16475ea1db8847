"""Two principals, two conversations each, over streamable HTTP in both protocol eras, against a real
Sentinel:
no answer, fact, consent or session of one is visible to or usable by the other; a decline ends only its call;
a restart starts new conversations; a principal reaches only what it may."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from tests.identity.identity_rig import (
    ALICE,
    BOB,
    CAROL,
    SESSION_META,
    User,
    env_for,
    http_client,
    http_sentinel,
    session_line,
    text,
    write_config,
)
from mcp.types import CallToolResult

from sentinel_mcp.gateway.request_state import PREFIX as SEAL_PREFIX

pytestmark = pytest.mark.timeout(240)
BIND = {"context": "booking_of_interest", "value": "BK-789"}
BOUND = 'booking_of_interest = "BK-789"'  # the summary line of a bound context


def facts(result: CallToolResult) -> str:
    assert not result.is_error, text(result)
    return text(result)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_facts_sessions_consents_and_answers_stay_with_their_principal(tmp_path, mode):
    cfg = write_config(tmp_path)
    alice_user, bob_user = User(remember=True), User(remember=False)
    with http_sentinel(cfg) as (base, _):
        async with (
            http_client(base, ALICE, mode, alice_user) as alice1,
            http_client(base, ALICE, mode, alice_user) as alice2,
            http_client(base, BOB, mode, bob_user) as bob1,
            http_client(base, BOB, mode, bob_user) as bob2,
        ):
            # --- facts belong to a conversation, conversations to a principal
            bound = await alice1.call_tool("sentinel__sentinel_bind", BIND)
            assert not bound.is_error, text(bound)
            a1 = await alice1.call_tool("sentinel__sentinel_facts", {})
            a1_id = session_line(a1)
            assert a1_id.startswith("alice/") and BOUND in facts(a1)
            for other in (alice2, bob1, bob2):
                seen = await other.call_tool("sentinel__sentinel_facts", {})
                assert BOUND not in facts(seen) and session_line(seen) != a1_id
            assert session_line(await bob1.call_tool("sentinel__sentinel_facts", {})).startswith("bob/")

            # --- a session key counts only for its own principal, in any spelling
            token = alice1.session
            assert token and token.startswith(SEAL_PREFIX)
            for key in (token, a1_id, a1_id.upper(), "alice/" + a1_id.split("/", 1)[1], a1_id + " "):
                stolen = await bob1.client.call_tool("sentinel__sentinel_facts", {}, meta={SESSION_META: key})
                assert stolen.is_error and BOUND not in text(stolen), key
            async with http_client(base, BOB, mode, headers={"X-Sentinel-Session": a1_id}) as thief:
                stolen = await thief.client.call_tool("sentinel__sentinel_facts", {})
                assert stolen.is_error and "not yours" in text(stolen)
            joined = await alice2.client.call_tool("sentinel__sentinel_facts", {}, meta={SESSION_META: token})
            assert BOUND in facts(joined)  # the same principal may carry its own session
            labelled = await bob2.client.call_tool(
                "sentinel__sentinel_facts", {}, meta={SESSION_META: "work"}
            )
            assert session_line(labelled).startswith(
                "bob/label-work-"
            )  # a label names bob's own conversation

            # --- consent to personal data is per principal (remembered for alice only)
            read = {"booking_id": "BK-789"}
            r = await alice1.call_tool("bk__get_booking", read)
            assert not r.is_error and len(alice_user.asked) == 1 and "bookings" in alice_user.asked[0]
            r = await alice2.call_tool("bk__get_booking", read)
            assert not r.is_error and len(alice_user.asked) == 1  # remembered: not asked again
            bob_user.approve = False
            r = await bob1.call_tool("bk__get_booking", read)
            assert r.is_error and "declined" in text(r) and len(bob_user.asked) == 1
            bob_user.approve = True  # a decline ended that call only: the retry asks again and can succeed
            r = await bob1.call_tool("bk__get_booking", read)
            assert not r.is_error and len(bob_user.asked) == 2
            r = await bob2.call_tool("bk__get_booking", read)
            assert not r.is_error and len(bob_user.asked) == 3  # "this call only": asked every time

            # --- a declined confirmation ends its call; the next call asks again and can succeed
            cancel = {"booking_id": "BK-789"}
            bob_user.approve = False
            r = await bob1.call_tool("bk__cancel_booking", cancel)
            assert r.is_error and "declined" in text(r)
            bob_user.approve = True
            r = await bob1.call_tool("bk__cancel_booking", cancel)
            assert not r.is_error, text(r)
            assert json.loads(text(r))["status"] == "cancelled"

    # --- the audit log says who did what; each principal's view holds only its own calls
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "sentinel_mcp",
            "-c",
            str(cfg),
            "audit",
            "--json",
            "--tail",
            "500",
            "--principal",
            "bob",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env_for(cfg),
    )
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert rows and {r["principal"] for r in rows} == {"bob"}
    assert {r["tool"] for r in rows} >= {"bk__get_booking", "bk__cancel_booking"}
    assert all(r["session"].startswith("bob/") for r in rows if r["origin"] == "client")


async def test_a_request_state_is_no_use_to_another_principal(tmp_path):
    cfg = write_config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        async with http_client(base, ALICE, "auto") as alice, http_client(base, BOB, "auto") as bob:
            asked = await alice.client.session.call_tool(
                "bk__get_booking", {"booking_id": "BK-789"}, allow_input_required=True
            )
            assert asked.input_requests, asked  # alice is asked for her consent
            key = next(iter(asked.input_requests))
            yes = {key: {"action": "accept", "content": {"allow": True, "remember": True}}}
            replay = await bob.client.session.call_tool(
                "bk__get_booking",
                {"booking_id": "BK-789"},
                input_responses=yes,
                request_state=asked.request_state,
                allow_input_required=True,
            )
            assert getattr(replay, "is_error", False) and "request state" in text(replay)
            minted = await bob.client.session.call_tool(
                "bk__get_booking", {"booking_id": "BK-789"}, input_responses=yes, allow_input_required=True
            )
            assert getattr(minted, "is_error", False)
            # and bob's own call still asks him
            fresh = await bob.client.session.call_tool(
                "bk__get_booking", {"booking_id": "BK-789"}, allow_input_required=True
            )
            assert fresh.input_requests


async def test_a_principal_sees_and_calls_only_what_it_may_reach(tmp_path):
    cfg = write_config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        async with http_client(base, CAROL, "auto") as carol, http_client(base, ALICE, "auto") as alice:
            assert [t.name for t in (await carol.list_tools()).tools] == ["bk__list_bookings"]
            assert len((await alice.list_tools()).tools) > 1
            r = await carol.call_tool("bk__list_bookings", {"user_id": "u_123"})
            assert not r.is_error
            for name in ("bk__cancel_booking", "sentinel__sentinel_facts", "bk__get_booking"):
                r = await carol.call_tool(name, {"booking_id": "BK-789"})
                assert (
                    r.is_error
                    and "unknown tool" in text(r)
                    and "cancel_booking" not in text(r).split("?")[-1]
                )


async def test_a_restart_starts_new_conversations(tmp_path):
    cfg = write_config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        async with http_client(base, ALICE, "auto") as alice:
            assert not (await alice.call_tool("sentinel__sentinel_bind", BIND)).is_error
            before = await alice.call_tool("sentinel__sentinel_facts", {})
            assert BOUND in facts(before)
            token, old_id = alice.session, session_line(before)
        async with http_client(base, ALICE, "auto") as labelled:
            assert not (
                await labelled.client.call_tool("sentinel__sentinel_bind", BIND, meta={SESSION_META: "trip"})
            ).is_error
    with http_sentinel(cfg) as (base, _):
        async with http_client(base, ALICE, "auto") as alice:
            for key in (token, old_id):
                r = await alice.client.call_tool("sentinel__sentinel_facts", {}, meta={SESSION_META: key})
                assert r.is_error and BOUND not in text(r)
            r = await alice.client.call_tool("sentinel__sentinel_facts", {}, meta={SESSION_META: "trip"})
            assert BOUND not in facts(r)  # a label names a new conversation after a restart
            assert BOUND not in facts(await alice.call_tool("sentinel__sentinel_facts", {}))


async def test_an_mcp_session_id_is_its_principals_only(tmp_path):
    import httpx2

    cfg = write_config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=10) as http:
            init = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "a", "version": "1"},
                },
            }
            accept = {"Accept": "application/json, text/event-stream"}
            opened = await http.post(
                f"{base}/mcp", json=init, headers={**accept, "Authorization": f"Bearer {ALICE}"}
            )
            sid = opened.headers["mcp-session-id"]
            # bob presenting alice's session id can neither send on it, listen to it nor end it
            bob = {**accept, "Authorization": f"Bearer {BOB}", "Mcp-Session-Id": sid}
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            assert (await http.post(f"{base}/mcp", json=ping, headers=bob)).status_code == 404
            assert (await http.delete(f"{base}/mcp", headers=bob)).status_code == 404
            mine = {**accept, "Authorization": f"Bearer {ALICE}", "Mcp-Session-Id": sid}
            assert (await http.post(f"{base}/mcp", json=ping, headers=mine)).status_code != 404
