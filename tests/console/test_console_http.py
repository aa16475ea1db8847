"""The console over real HTTP against a real Sentinel (subprocess): the inbox answers non-eliciting clients'
questions (held calls complete, retries pass, denials end the call), every principal sees and answers only its
own items, forms need the principal's CSRF token, nothing hostile is ever rendered as markup, activity opens
proofs, facts can be revoked, and the what-if replay (page and command) finds the decision a new rule flips.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import re
import subprocess
import sys
import uuid
from urllib.parse import unquote

import httpx2
import pytest
from tests.console.console_rig import (
    ALICE,
    BOB,
    CAROL,
    Browser,
    answer_fields,
    answer_rounds,
    console_config,
    csrf_of,
    grant_consent,
    http_sentinel,
    items_of,
    mcp_client,
    signed_in,
    text,
)
from tests.console.console_rig import OWNER_TOKEN as RIG_OWNER
from tests.identity.identity_rig import console_secret, env_for

pytestmark = pytest.mark.timeout(180)
BK_PL_FLIP = ("only confirmed bookings can be cancelled')", "only pending bookings can be cancelled')")


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("console"))
    with http_sentinel(cfg) as (base, proc):
        grant_consent(cfg, "alice", "bookings")  # her proofs rest on her bookings' reads: hers to see
        yield base, cfg


async def watching(base: str, token: str) -> tuple[asyncio.Task, httpx2.AsyncClient]:
    """An open console page of this principal (its live-update stream): calls are held while it is open."""
    http = httpx2.AsyncClient(timeout=None, headers={"Authorization": f"Bearer {token}"})
    opened = asyncio.Event()

    async def listen() -> None:
        async with http.stream("GET", f"{base}/console/events") as r:
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
            async for line in r.aiter_lines():
                if line.startswith("event: inbox"):
                    opened.set()

    task = asyncio.create_task(listen())
    await asyncio.wait_for(opened.wait(), 20)
    return task, http


async def test_no_token_foreign_host_and_origin_are_refused(sentinel):
    base, _ = sentinel
    async with httpx2.AsyncClient(timeout=30) as http:
        for path in (
            "/console",
            "/console/",
            "/console/inbox",
            "/console/activity",
            "/console/activity/1",
            "/console/sessions",
            "/console/policy",
            "/console/pins",
            "/console/pins/tool?tool=x",
            "/console/events",
        ):
            r = await http.get(base + path)
            for _ in range(3):  # redirects only, ending at the sign-in form
                assert r.status_code in (303, 307), (path, r.status_code)
                where = r.headers["location"]
                if where == "/console/login":
                    break
                r = await http.get(where if where.startswith("http") else base + where)
            assert where == "/console/login", path
        for path in (
            "/console/inbox/x",
            "/console/policy/whatif",
            "/console/sessions/alice/x/revoke",
            "/console/consents/revoke",
            "/console/consents/sensors/revoke",
            "/console/pins/accept",
            "/console/logout",
        ):
            r = await http.post(base + path, data={"csrf": "0" * 64})
            assert r.status_code == 401, path
        for bad in ("Bearer nope-not-a-token-at-all", "Bearer x", "Basic YWxpY2U6eA==", f"bearer {ALICE}x"):
            r = await http.get(base + "/console/inbox", headers={"Authorization": bad})
            assert r.status_code == 303 and r.headers["location"] == "/console/login", bad
        r = await http.get(base + "/console/inbox", headers={"host": "evil.example:80"})
        assert r.status_code == 421
        r = await http.post(
            base + "/console/login", data={"secret": console_secret(ALICE)}, headers={"origin": "http://evil.example"}
        )
        assert r.status_code == 403
        # the login form itself: its token is bound to a cookie set with the form (no cookie, no sign-in)
        form = await http.get(base + "/console/login")
        stolen = csrf_of(form.text)
        async with httpx2.AsyncClient(timeout=30) as other:
            r = await other.post(base + "/console/login",
                                 data={"csrf": stolen, "secret": console_secret(ALICE)})
            assert r.status_code == 403 and "console" not in r.cookies
        r = await http.post(base + "/console/login",
                            data={"csrf": stolen, "secret": "wrong-secret-0123456789"})
        assert r.status_code == 401 and "sentinel_console" not in r.cookies
        r = await http.post(
            base + "/console/login",
            data={"csrf": stolen, "secret": console_secret(ALICE)},
            headers={"sec-fetch-site": "cross-site"},
        )
        assert r.status_code == 403
        # the session cookie is HttpOnly, SameSite=Strict, scoped to the console
        form = await http.get(base + "/console/login")
        r = await http.post(base + "/console/login", data={"csrf": csrf_of(form.text),
                                                           "secret": console_secret(ALICE)})
        cookie = r.headers["set-cookie"].lower()
        assert (
            r.status_code == 303
            and "httponly" in cookie
            and "samesite=strict" in cookie
            and "path=/console" in cookie
        )
        assert ALICE not in r.headers["set-cookie"] and console_secret(ALICE) not in r.headers["set-cookie"]
        page = await http.get(base + "/console/inbox")
        assert page.status_code == 200 and "alice" in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]


async def test_held_call_approved_and_denied_from_the_inbox_only_by_its_principal(sentinel):
    base, _ = sentinel
    listener, listen_http = await watching(base, ALICE)
    try:
        async with signed_in(base, ALICE) as alice, signed_in(base, BOB) as bob, mcp_client(base, ALICE) as c:
            call = asyncio.create_task(c.call_tool("bk__cancel_booking", {"booking_id": "BK-789"}))
            page = await alice.wait_items(1)
            [item] = items_of(page)
            assert "bk__cancel_booking" in page and "BK-789" in page and "Why do you want to cancel" in page
            assert "askable cancel_reason" in page and "held call" in page
            # bob: does not see it, cannot answer it (by its id, with his own valid token)
            bob_page = await bob.page("/console/inbox")
            assert item not in bob_page and "BK-789" not in bob_page
            r = await bob.post(
                f"/console/inbox/{item}",
                {"decision": "approve", **answer_fields(page, item)},
                csrf=csrf_of(bob_page),
            )
            assert r.status_code == 404
            # alice: no token, a forged one, bob's: refused, nothing answered
            fields = {"decision": "approve", **answer_fields(page, item)}
            real = csrf_of(page)
            # one character changed (never "changed" to itself: a token may end in 0)
            for forged in (
                None,
                "",
                "0" * 64,
                csrf_of(bob_page),
                real.upper(),
                real[:-1] + ("1" if real[-1] == "0" else "0"),
            ):
                r = await alice.post(f"/console/inbox/{item}", fields, csrf=forged)
                assert r.status_code == 403, forged
            r = await alice.post(f"/console/inbox/{item}", fields, headers={"sec-fetch-site": "cross-site"})
            assert r.status_code == 403
            assert not call.done() and item in items_of(await alice.page("/console/inbox"))
            # a guessed id is as unknown as bob's
            r = await alice.post(f"/console/inbox/{item[:-2]}xx", fields)
            assert r.status_code == 404
            r = await alice.post(f"/console/inbox/{item}", fields)
            assert r.status_code == 303
            result = await answer_rounds(alice, call)  # then the confirmation, in its own round
            assert not result.is_error and '"cancelled"' in text(result)  # the tool ran
            assert item not in items_of(await alice.page("/console/inbox"))
            r = await alice.post(f"/console/inbox/{item}", fields)  # answered once only
            assert r.status_code == 404

            # deny: the call ends, declined, nothing remembered
            call = asyncio.create_task(
                c.call_tool("bk__merge_bookings", {"first": "BK-456", "second": "BK-111"})
            )
            page = await alice.wait_items(1)
            [item] = items_of(page)
            assert "Merge BK-456 into BK-111?" in page
            r = await alice.post(f"/console/inbox/{item}", {"decision": "deny"})
            assert r.status_code == 303
            result = await asyncio.wait_for(call, 60)
            assert result.is_error and "declined" in text(result)
    finally:
        listener.cancel()
        await listen_http.aclose()


async def test_unwatched_call_is_blocked_at_once_and_the_retry_passes_after_an_answer_here(sentinel):
    base, _ = sentinel
    async with signed_in(base, BOB) as bob, mcp_client(base, BOB) as c:
        args = {"name": f"bob-{uuid.uuid4().hex[:6]}"}
        first = await c.call_tool("tb__delete_thing", args)
        assert first.is_error and "waiting for the user" in text(first) and "/console/inbox" in text(first)
        page = await bob.wait_items(1)
        [item] = items_of(page)
        assert "waiting for the client" in page and args["name"] in page
        assert (await bob.post(f"/console/inbox/{item}", {"decision": "approve"})).status_code == 303
        other = await c.call_tool("tb__delete_thing", {"name": "someone-else"})  # another call: not approved
        assert other.is_error
        again = await c.call_tool("tb__delete_thing", args)
        assert not again.is_error and args["name"] in text(again)
        once = await c.call_tool("tb__delete_thing", args)  # the answer counted once
        assert once.is_error


XSS = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "'><svg/onload=alert(1)>",
    "</textarea><script>alert(2)</script>",
    "{{7*7}}{% raw %}",
    "javascript:alert(1)",
    '<a href="javascript:alert(3)">x</a>',
    "\u202e<b>evil</b>\u200b",
    "&lt;script&gt;",
]


async def test_hostile_text_is_never_markup(sentinel):
    base, _ = sentinel
    async with signed_in(base, CAROL) as _carol, mcp_client(base, CAROL) as c:
        # carol may reach bk__list_bookings only: everything else is audited as an unknown tool, name and all
        for spelling in XSS:
            await c.call_tool(spelling, {"x": spelling})
            await c.call_tool("bk__list_bookings", {"user_id": spelling})
    async with signed_in(base, ALICE) as alice, mcp_client(base, ALICE) as c:
        calls = [asyncio.create_task(c.call_tool("tb__delete_thing", {"name": s})) for s in XSS[:4]]
        inbox = await alice.wait_items(4)
        for task in calls:
            task.cancel()
        pages = [inbox, await carol_activity(base)]
    for page in pages:
        body = page[page.index("<main") :]
        assert "<script>alert" not in body and "<img src=x" not in body and "<svg" not in body
        assert "onerror=alert(1)>" not in body and '<a href="javascript' not in body and "<b>evil" not in body
    assert "{{7*7}}" in html.unescape(pages[1])  # shown as text, never evaluated
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages[1]
    assert "\u202e" not in pages[0] and "\u202e" not in pages[1]  # direction overrides are made visible


async def carol_activity(base: str) -> str:
    async with signed_in(base, CAROL) as carol:
        return await carol.page("/console/activity")


async def test_activity_filters_proofs_and_isolation(sentinel):
    base, _ = sentinel
    async with signed_in(base, ALICE) as alice, signed_in(base, BOB) as bob:
        page = await alice.page("/console/activity?tool=cancel&decision=allow")
        ids = re.findall(r'href="/console/activity/([^"/]+)"', page)
        assert ids and "bk__cancel_booking" in page and "bk__merge_bookings" not in page
        assert "bob" not in re.sub(r"<[^>]+>", "", page[page.index("<tbody") :])
        proof = await alice.page(f"/console/activity/{ids[0]}")
        assert 'id="proof-tree"' in proof and "cancel_reason(&#39;BK-789&#39;,change_of_plan)" in proof
        assert "provenance: user" in proof and "confirmed: Cancel booking BK-789?" in proof
        none = await alice.page("/console/activity?decision=allow&since=2999-01-01T00:00")
        assert not re.findall(r'href="/console/activity/([^"/]+)"', none)
        # bob: alice's rows are not in his activity, and her proof is not found by id
        assert "bk__cancel_booking" not in (await bob.page("/console/activity"))
        r = await bob.get(f"/console/activity/{ids[0]}")
        assert r.status_code == 404


async def test_sessions_show_facts_and_revoke_only_ones_own(sentinel):
    base, _ = sentinel
    async with signed_in(base, ALICE) as alice, signed_in(base, BOB) as bob:
        page = await alice.page("/console/sessions")
        sessions = [unquote(html.unescape(s)) for s in re.findall(r'href="/console/sessions/([^"]+)"', page)]
        assert sessions and all(s.startswith("alice/") for s in sessions)
        pages = {s: await alice.page(f"/console/sessions/{s}") for s in sessions}
        sid = next(s for s, p in pages.items() if "cancel_reason" in p)
        page = pages[sid]
        fact = html.unescape(re.search(r'name="fact" value="(cancel_reason[^"]+)"', page).group(1))
        assert ">user<" in page
        # bob cannot read or revoke it
        assert (await bob.get(f"/console/sessions/{sid}")).status_code == 404
        r = await bob.post(f"/console/sessions/{sid}/revoke", {"fact": fact})
        assert r.status_code == 404
        # a pattern is not a fact: nothing is revoked
        for pattern in ("cancel_reason(_, _)", "_", "X", fact + " ", "cancel_reason('BK-789', X)"):
            r = await alice.post(f"/console/sessions/{sid}/revoke", {"fact": pattern})
            assert r.status_code == 404, pattern
        assert fact in html.unescape(await alice.page(f"/console/sessions/{sid}"))
        r = await alice.post(f"/console/sessions/{sid}/revoke", {"fact": fact})
        assert r.status_code == 303
        assert fact not in html.unescape(await alice.page(f"/console/sessions/{sid}"))


async def test_whatif_replay_flips_a_decision_on_the_page_and_the_command(sentinel, tmp_path):
    base, cfg = sentinel
    from tests.identity.identity_rig import BOOKINGS_PL

    original = BOOKINGS_PL.read_text()
    flipped = original.replace(*BK_PL_FLIP).replace(
        "booking_status(B, confirmed)", "booking_status(B, pending)"
    )
    assert flipped != original
    async with signed_in(base, RIG_OWNER) as alice, signed_in(base, BOB) as bob:  # alice: the owner here
        page = await alice.page("/console/policy?file=bookings.pl")
        assert "No problems" in page or 'class="problems"' in page, page[page.index("<main") :][:3000]
        r = await alice.post("/console/policy/whatif", {"file": "bookings.pl", "candidate": flipped})
        assert r.status_code == 200, r.text[:1000]
        report = r.text[r.text.index('id="whatif-report"') :]
        count = int(re.search(r'id="change-count">(\d+)<', r.text).group(1))
        assert count >= 1, re.sub(r"<[^>]+>", " ", report)[:4000]
        assert (
            count >= 1
            and "bk__cancel_booking" in r.text
            and "only pending bookings can be cancelled" in r.text
        )
        # each changed call's two proofs, side by side, as trees (the one that allowed it names its facts)
        change = report[report.index('class="card change"') :]
        now, candidate = change.index('class="proof-now"'), change.index('class="proof-candidate"')
        assert '<ul class="tree">' in change[now:candidate] and '<ul class="tree">' in change[candidate:]
        assert "cancel_reason" in change[now:candidate]
        same = await alice.post("/console/policy/whatif", {"file": "bookings.pl", "candidate": original})
        assert re.search(r'id="change-count">0<', same.text)
        broken = await alice.post(
            "/console/policy/whatif", {"file": "bookings.pl", "candidate": "guard(x, ("}
        )
        assert "does not load" in broken.text
        # bob tries no candidate (it would run in Sentinel's engine): refused, nothing replayed
        theirs = await bob.post("/console/policy/whatif", {"file": "bookings.pl", "candidate": flipped})
        assert theirs.status_code == 403 and 'id="whatif-report"' not in theirs.text
    new = tmp_path / "bookings.pl"
    new.write_text(flipped)
    run = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "replay", "--rulebase", str(new)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env_for(cfg),
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "CHANGES" in run.stdout and "bk__cancel_booking" in run.stdout and "allow -> deny" in run.stdout
    new.write_text(original)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "sentinel_mcp",
            "-c",
            str(cfg),
            "replay",
            "--rulebase",
            str(new),
            "--since",
            "1h",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env_for(cfg),
    )
    assert run.returncode == 0 and "0 decision(s) would change" in run.stdout, run.stdout + run.stderr


async def test_a2a_task_waiting_for_input_is_answered_in_the_console(sentinel):
    base, _ = sentinel
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [
            {
                "data": {
                    "type": "tool_call",
                    "tool_call_id": "t1",
                    "name": "tb__delete_thing",
                    "args": {"name": "from-a2a"},
                }
            }
        ],
    }
    async with (
        httpx2.AsyncClient(timeout=60) as http,
        signed_in(base, BOB) as bob,
        signed_in(base, ALICE) as alice,
    ):
        reply = await http.post(
            f"{base}/a2a",
            json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}},
            headers={"Authorization": f"Bearer {BOB}", "A2A-Version": "1.0"},
        )
        task = reply.json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
        page = await bob.wait_items(1)
        item = next(i for i in items_of(page) if i.startswith("a2a-"))
        assert "from-a2a" in page and "A2A task" in page
        assert item not in await alice.page("/console/inbox")
        r = await alice.post(f"/console/inbox/{item}", {"decision": "approve"})
        assert r.status_code == 404
        assert (await bob.post(f"/console/inbox/{item}", {"decision": "approve"})).status_code == 303
        for _ in range(100):
            got = await http.post(
                f"{base}/a2a",
                json={"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task["id"]}},
                headers={"Authorization": f"Bearer {BOB}", "A2A-Version": "1.0"},
            )
            state = got.json()["result"]["status"]["state"]
            if state not in ("TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED"):
                break
            await asyncio.sleep(0.1)
        assert state == "TASK_STATE_COMPLETED", got.json()


OWNER_TOKEN, ROVER_KEY = "owner-token-" + "x" * 20, "rover-key-1234"


@contextlib.asynccontextmanager
async def peer_at_the_console(base: str, key: str):
    """The A2A peer at the console: its key signs nothing in (a peer has no console secret), so all it has
    is its key as a header, a script's: it reads pages, it sends no form."""
    async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
        form = await http.get(f"{base}/console/login")
        r = await http.post(f"{base}/console/login", data={"csrf": csrf_of(form.text), "secret": key},
                            headers={"origin": base})
        assert r.status_code == 401 and "sentinel_console=" not in r.headers.get("set-cookie", "")
    async with httpx2.AsyncClient(timeout=60, follow_redirects=False, headers={"x-api-key": key}) as http:
        yield Browser(base, http)


def with_peer(tmp_path):
    """The console rig with an A2A peer "rover" (its key) and the owner's token."""
    import json as _json

    cfg = console_config(tmp_path)
    body = _json.loads(cfg.read_text())
    body["sentinel"]["a2a"]["api_keys"] = {"rover": ROVER_KEY}
    body["sentinel"]["http"] = {"token": OWNER_TOKEN, "console_secret": console_secret(OWNER_TOKEN)}
    cfg.write_text(_json.dumps(body))
    return cfg


async def test_a_peers_question_is_the_owners_to_answer_not_the_peers(tmp_path):
    """An A2A peer (a key of ``sentinel.a2a``, not a configured principal) cannot sign in to the console with
    its own key, and reading it by its key sees no question and can answer none: not its own task's (that
    would be the phone's user's "yes" given by the agent), not any other. The owner's inbox lists the peer's
    task and the owner's answer resumes it."""
    cfg = with_peer(tmp_path)
    call = {"type": "tool_call", "tool_call_id": "t1", "name": "tb__delete_thing",
            "args": {"name": "peer-thing"}}
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"data": call}]}
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=60) as http:
            peer = {"X-API-Key": ROVER_KEY, "A2A-Version": "1.0"}
            reply = await http.post(f"{base}/a2a", json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                                                         "params": {"message": message}}, headers=peer)
            task = reply.json()["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
            item = "a2a-" + task["id"]
            async with peer_at_the_console(base, ROVER_KEY) as rover, signed_in(base, OWNER_TOKEN) as owner:
                assert item not in await rover.page("/console/inbox")
                refused = await rover.post(f"/console/inbox/{item}", {"decision": "approve"})
                assert refused.status_code == 403
                got = await http.post(f"{base}/a2a", json={"jsonrpc": "2.0", "id": 2, "method": "GetTask",
                                                           "params": {"id": task["id"]}}, headers=peer)
                assert got.json()["result"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
                page = await owner.wait_items(1)
                assert item in items_of(page) and "peer-thing" in page
                approved = await owner.post(f"/console/inbox/{item}", {"decision": "approve"})
                assert approved.status_code == 303
                for _ in range(100):
                    got = await http.post(f"{base}/a2a", json={"jsonrpc": "2.0", "id": 3, "method": "GetTask",
                                                               "params": {"id": task["id"]}}, headers=peer)
                    state = got.json()["result"]["status"]["state"]
                    if state not in ("TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED"):
                        break
                    await asyncio.sleep(0.1)
                assert state == "TASK_STATE_COMPLETED", got.json()


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_peers_own_mcp_calls_ask_the_owner_never_the_peers_client(tmp_path, mode):
    """An A2A peer signed in to the MCP front with its key, its client able to elicit and saying yes to
    everything: it is asked nothing (its yes would be the user's), in either era. The call is blocked; the
    question waits in the owner's inbox (not the peer's), the peer cannot answer it there, and after the
    owner's yes the peer's retry runs. A question the upstream itself pushes during a peer's call is not put
    to the peer either. While the owner's console is open, a peer's call is held and completes on the owner's
    answer."""
    from tests.identity.identity_rig import User, http_client

    cfg = with_peer(tmp_path)
    with http_sentinel(cfg) as (base, _):
        says_yes = User(approve=True)
        async with http_client(base, ROVER_KEY, mode, user=says_yes) as peer, \
                peer_at_the_console(base, ROVER_KEY) as rover, signed_in(base, OWNER_TOKEN) as owner:
            blocked = await peer.call_tool("tb__delete_thing", {"name": "peer-thing"})
            assert blocked.is_error and "deleted" not in text(blocked), text(blocked)
            assert says_yes.asked == []
            page = await owner.wait_items(1)
            [item] = items_of(page)
            assert "peer-thing" in page
            assert item not in await rover.page("/console/inbox")
            assert (await rover.post(f"/console/inbox/{item}", {"decision": "approve"})).status_code == 403
            assert (await owner.post(f"/console/inbox/{item}", {"decision": "approve"})).status_code == 303
            done = await peer.call_tool("tb__delete_thing", {"name": "peer-thing"})
            assert not done.is_error and text(done) == "deleted peer-thing", text(done)
            assert says_yes.asked == []

            if mode == "legacy":  # the upstream's own pushed question, after the owner's yes to the call
                blocked = await peer.call_tool("tb__confirm_push", {"what": "wipe"})
                assert blocked.is_error, text(blocked)
                [item] = items_of(await owner.wait_items(1))
                yes = await owner.post(f"/console/inbox/{item}", {"decision": "approve"})
                assert yes.status_code == 303
                call = asyncio.create_task(peer.call_tool("tb__confirm_push", {"what": "wipe"}))
                page = await owner.wait_items(1)  # what the upstream asks, put to the owner, not the peer
                [item] = items_of(page)
                assert "really wipe" in page
                answer = {**answer_fields(page, item), "decision": "approve"}
                assert (await owner.post(f"/console/inbox/{item}", answer)).status_code == 303
                pushed = await asyncio.wait_for(call, 60)
                assert text(pushed).startswith("wipe:accept:"), text(pushed)
                assert says_yes.asked == []

        # the owner's console open: the peer's call is held, and the owner's answer completes it
        listen, http = await watching(base, OWNER_TOKEN)
        try:
            async with http_client(base, ROVER_KEY, mode, user=says_yes) as peer, \
                    signed_in(base, OWNER_TOKEN) as owner:
                call = asyncio.create_task(peer.call_tool("tb__delete_thing", {"name": "held-thing"}))
                page = await owner.wait_items(1)
                [item] = items_of(page)
                assert not call.done()
                yes = await owner.post(f"/console/inbox/{item}", {"decision": "approve"})
                assert yes.status_code == 303
                held = await asyncio.wait_for(call, 60)
                assert not held.is_error and text(held) == "deleted held-thing", text(held)
                assert says_yes.asked == []
        finally:
            listen.cancel()
            await http.aclose()


async def test_a_flood_of_wrong_secrets_blocks_every_secret_from_that_address_for_a_while(tmp_path):
    """Wrong console secrets (many spellings, tokens among them: one client address) pile up to 429; past the
    limit every secret from that address, the people's right ones too, is refused unchecked until the block
    ends (a right secret that still signed in let a guesser go on at full speed). The owner's way in meanwhile
    is the one-time local link (``test_console_sign_in_limit.py``)."""
    cfg = with_peer(tmp_path)
    wrong = ["", " ", "x", OWNER_TOKEN, ALICE, ROVER_KEY, console_secret(OWNER_TOKEN)[:-1],
             console_secret(OWNER_TOKEN).upper(), console_secret(ALICE) + "x",
             "Bearer " + console_secret(ALICE),
             "\u0430" + console_secret(ALICE)[1:], "%00", "a" * 8000]
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
            statuses = []
            for i in range(30):
                form = await http.get(f"{base}/console/login")  # each try on a fresh form (single use)
                r = await http.post(f"{base}/console/login", headers={"origin": base},
                                    data={"csrf": csrf_of(form.text), "secret": wrong[i % len(wrong)]})
                statuses.append(r.status_code)
            assert set(statuses[:20]) == {401} and set(statuses[20:]) == {429}, statuses
            for token in (OWNER_TOKEN, ALICE):
                form = await http.get(f"{base}/console/login")
                r = await http.post(f"{base}/console/login", headers={"origin": base},
                                    data={"csrf": csrf_of(form.text), "secret": console_secret(token)})
                assert r.status_code == 429 and "location" not in r.headers, (r.status_code, r.text[:300])
                # no signed-in cookie (the login form's own cookie is another name)
                assert not any(c.startswith(("sentinel_console=", "__Host-sentinel_console="))
                               for c in r.headers.get_list("set-cookie")), r.headers
