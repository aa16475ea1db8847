"""Two principals, two conversations each, over streamable HTTP in both protocol eras, against a real
Sentinel:
no answer, fact, consent or session of one is visible to or usable by the other; a decline ends only its call;
a restart starts new conversations; a principal reaches only what it may."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Iterator

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
TOOLBOX = Path(__file__).resolve().parent.parent / "gateway" / "toolbox_server.py"
BIND = {"context": "booking_of_interest", "value": "BK-789"}
BOUND = 'booking_of_interest = "BK-789"'  # the summary line of a bound context


@pytest.fixture(scope="module")
def shared_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One Sentinel for the tests that only open sessions and make calls nobody answers (no consent given, no
    fact bound): what one leaves, another's assertions do not read. A test that binds, consents or restarts
    starts its own."""
    with http_sentinel(write_config(tmp_path_factory.mktemp("two-principals"))) as (base, _):
        yield base


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


async def test_a_request_state_is_no_use_to_another_principal(shared_base):
    base = shared_base
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


async def test_a_principal_sees_and_calls_only_what_it_may_reach(shared_base):
    base = shared_base
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


async def test_an_mcp_session_id_is_its_principals_only(shared_base):
    import httpx2

    base = shared_base
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


INIT_2025 = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def test_a_header_that_names_one_thing_is_refused_when_sent_twice(shared_base):
    """One reader took the first of two ``Mcp-Session-Id`` headers (the SDK's session look-up) and another
    the last (the owner check): bob's id last and alice's first got him into her session. Any such header
    sent twice is refused, whatever the order or the spelling of its name."""
    import httpx2

    base = shared_base
    async with httpx2.AsyncClient(timeout=10) as http:
        sid = (await http.post(f"{base}/mcp", json=INIT_2025, headers={
            **ACCEPT, "Authorization": f"Bearer {ALICE}"})).headers["mcp-session-id"]
        bob_sid = (await http.post(f"{base}/mcp", json=INIT_2025, headers={
            **ACCEPT, "Authorization": f"Bearer {BOB}"})).headers["mcp-session-id"]
        ping = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        spellings = (("Mcp-Session-Id", "mcp-session-id"), ("MCP-SESSION-ID", "Mcp-Session-Id"))
        for name_a, name_b in spellings:
            for first, last in ((sid, bob_sid), (bob_sid, sid)):
                headers = [*ACCEPT.items(), ("Authorization", f"Bearer {BOB}"), (name_a, first),
                           (name_b, last)]
                for method in ("POST", "GET", "DELETE"):
                    body = ping if method == "POST" else None
                    r = await http.request(method, f"{base}/mcp", content=body, headers=headers)
                    assert r.status_code == 400 and "more than once" in r.text, (method, r.status_code)
        twice = [*ACCEPT.items(), ("Authorization", f"Bearer {BOB}"),
                 ("Authorization", f"Bearer {ALICE}")]
        assert (await http.post(f"{base}/mcp", content=ping, headers=twice)).status_code == 400
        versions = [*ACCEPT.items(), ("Authorization", f"Bearer {ALICE}"),
                    ("MCP-Protocol-Version", "2026-07-28"), ("MCP-Protocol-Version", "2025-11-25")]
        assert (await http.post(f"{base}/mcp", content=ping, headers=versions)).status_code == 400
        # alice's session is still hers, and answers her
        mine = {**ACCEPT, "Authorization": f"Bearer {ALICE}", "Mcp-Session-Id": sid}
        assert (await http.post(f"{base}/mcp", content=ping, headers=mine)).status_code == 200


async def test_a_legacy_sse_session_is_its_openers_only(shared_base):
    """``/messages/?session_id=`` of alice's SSE stream, posted by bob (the id in every spelling the SDK reads
    as the same UUID): not found; so is a session nobody opened; alice's own post goes through."""
    import uuid

    import httpx2

    base = shared_base
    async with httpx2.AsyncClient(timeout=10) as http:
        opener = {"Authorization": f"Bearer {ALICE}"}
        async with http.stream("GET", f"{base}/sse", headers=opener) as stream:
            lines = stream.aiter_lines()  # kept open: leaving an ``async for`` would close the stream
            endpoint = None
            while endpoint is None:
                line = await lines.__anext__()
                if line.startswith("data: ") and "session_id=" in line:
                    endpoint = line[len("data: "):]
            hex_id = endpoint.split("session_id=")[1]
            u = uuid.UUID(hex=hex_id)
            init = json.dumps(INIT_2025)
            bob = {"Authorization": f"Bearer {BOB}", "Content-Type": "application/json"}
            for spelt in (hex_id, hex_id.upper(), str(u), "{" + str(u) + "}", f"urn:uuid:{u}"):
                r = await http.post(f"{base}/messages/?session_id={spelt}", content=init, headers=bob)
                assert r.status_code == 404, (spelt, r.status_code, r.text)
            r = await http.post(f"{base}/messages/?session_id={hex_id}&session_id={uuid.uuid4().hex}",
                                content=init, headers=bob)
            assert r.status_code == 400
            nobody = await http.post(f"{base}/messages/?session_id={uuid.uuid4().hex}", content=init,
                                     headers={**bob, "Authorization": f"Bearer {ALICE}"})
            assert nobody.status_code == 404
            assert (await http.post(f"{base}/messages/", content=init, headers=bob)).status_code == 400
            alice = {"Authorization": f"Bearer {ALICE}", "Content-Type": "application/json"}
            own = await http.post(f"{base}{endpoint}", content=init, headers=alice)
            assert own.status_code == 202, (endpoint, own.status_code, own.text)


async def test_the_owner_table_refuses_past_its_shares_and_forgets_ended_sessions():
    """Past a principal's share (or the table's total) a new session is refused (503), never made by pushing
    a live one out; an ended session is forgotten: its id is then not found for anyone (never open to whoever
    names it), and its share is free again."""
    from sentinel_mcp.app.http_app import McpSessionOwners
    from sentinel_mcp.identity.principal import Principal
    from sentinel_mcp.identity.resolver import SCOPE_KEY

    owners = McpSessionOwners(per_principal=2, capacity=3)
    made = iter(["s1", "s2", "s3", "s4", "s5"])

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"mcp-session-id", next(made).encode())] if scope["new"] else []})
        await send({"type": "http.response.body", "body": b""})

    async def call(who: str, sid: str | None) -> int:
        headers = [(b"mcp-session-id", sid.encode())] if sid else []
        scope = {"type": "http", "headers": headers, "new": sid is None,
                 SCOPE_KEY: Principal(name=who, kind="token") if who else None}
        got: list[int] = []

        async def send(message):
            if message["type"] == "http.response.start":
                got.append(message["status"])

        async def receive():
            return {"type": "http.request", "body": b""}

        await owners(app, scope, receive, send)
        return got[0]

    assert [await call("alice", None) for _ in range(3)] == [200, 200, 503]  # s1, s2; then her share is full
    assert await call("bob", None) == 200  # s3: the table's total
    assert await call("carol", None) == 503
    assert await call("alice", "s1") == 200 and await call("bob", "s1") == 404  # nothing was pushed out
    owners.ended("s1")
    assert await call("alice", "s1") == 404 and await call("bob", "s1") == 404
    assert await call("carol", None) == 200  # s4, in the room s1 left
    assert await call("carol", "s4") == 200 and await call("alice", "s4") == 404
    assert await call("bob", "never-opened") == 404


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_another_agents_client_answers_no_question_even_with_no_console(tmp_path, mode):
    """An A2A peer's key signs in to the MCP front as an agent: the gateway's questions are not put to its
    client (a yes there would be the user's), in either era, and with no console to send them to the call is
    blocked, not run; a person's client with the same capabilities is still asked."""
    cfg = write_config(tmp_path, console={"enabled": False}, a2a={"name": "identity-test", "task_db": "",
                                                                   "api_keys": {"rover": "rover-key-1234"}})
    body = json.loads(cfg.read_text())
    body["mcpServers"]["tb"] = {"command": sys.executable, "args": [str(TOOLBOX)]}
    cfg.write_text(json.dumps(body))
    with http_sentinel(cfg) as (base, _):
        agent_user, person = User(approve=True), User(approve=True)
        async with http_client(base, "rover-key-1234", mode, user=agent_user) as rover:
            for _ in range(2):
                r = await rover.call_tool("tb__delete_thing", {"name": "x"})
                assert r.is_error and "deleted" not in text(r), text(r)
            assert agent_user.asked == []
        async with http_client(base, ALICE, mode, user=person) as alice:
            r = await alice.call_tool("tb__delete_thing", {"name": "y"})
            assert not r.is_error and text(r) == "deleted y", text(r)
            assert person.asked
