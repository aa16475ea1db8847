"""What one client, signed in or not, may take of the console: bodies are read within a bound that counts the
bytes received (a multipart or chunked body does not get past it), one principal's sessions, inbox items and
live streams never push out another's, a stream ends with its session, and a second session cookie slipped in
by another page of this host signs nobody in. A real Sentinel over HTTP on 127.0.0.1 (the console rig)."""

from __future__ import annotations

import asyncio
import contextlib

import httpx2
import pytest

from sentinel_mcp.console import auth, inbox
from tests.console.console_rig import (
    ALICE, CAROL, console_config, console_secret, csrf_of, http_sentinel, signed_in,
)

pytestmark = pytest.mark.timeout(180)
MAX_SESSIONS_PER_PRINCIPAL = getattr(auth, "MAX_SESSIONS_PER_PRINCIPAL", 20)
MAX_STREAMS_PER_PRINCIPAL = getattr(inbox, "MAX_STREAMS_PER_PRINCIPAL", 16)


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("console-bounds"))
    with http_sentinel(cfg) as (base, proc):
        yield base, proc


def rss_kb(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


async def chunks(n: int, size: int):
    for _ in range(n):
        yield b"a" * size


@pytest.mark.parametrize("spelling", ["multipart file parts", "chunked urlencoded", "declared too long",
                                      "json", "text/plain", "no content type"])
async def test_a_sign_in_body_is_bounded_before_anything_is_checked(sentinel, spelling):
    base, proc = sentinel
    async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
        form = await http.get(f"{base}/console/login")
        csrf = csrf_of(form.text)
        headers = {"origin": base}
        if spelling == "multipart file parts":
            files = [(f"f{i}", (f"f{i}.bin", b"x" * 200_000)) for i in range(40)]
            r = await http.post(f"{base}/console/login", headers=headers, data={"csrf": csrf}, files=files)
        elif spelling == "chunked urlencoded":
            r = await http.post(f"{base}/console/login", content=chunks(200, 64 * 1024),
                                headers={**headers, "content-type": "application/x-www-form-urlencoded"})
        elif spelling == "declared too long":
            r = await http.post(f"{base}/console/login", content=b"csrf=" + b"a" * 20_000,
                                headers={**headers, "content-type": "application/x-www-form-urlencoded"})
        else:
            kind = {"json": "application/json", "text/plain": "text/plain", "no content type": ""}[spelling]
            r = await http.post(f"{base}/console/login", content=b'{"token": "x"}',
                                headers={**headers, "content-type": kind})
    assert r.status_code in (413, 415), (spelling, r.status_code, r.text[:300])
    assert proc.poll() is None


async def test_a_signed_in_form_body_sent_chunked_is_bounded_too(sentinel):
    base, proc = sentinel
    before = rss_kb(proc.pid)
    async with signed_in(base, CAROL) as carol:
        page = await carol.page("/console/inbox")
        for _ in range(3):
            r = await carol.http.post(
                f"{base}/console/logout", content=chunks(400, 64 * 1024),  # 25 MB, no Content-Length
                headers={"origin": base, "content-type": "application/x-www-form-urlencoded"})
            assert r.status_code == 413, r.status_code
        assert "csrf" in page
    assert rss_kb(proc.pid) - before < 60_000  # 75 MB were sent; none of it was kept


async def test_one_principal_signing_in_many_times_signs_nobody_else_out(sentinel):
    base, _ = sentinel
    async with signed_in(base, ALICE) as alice:
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
            for _ in range(MAX_SESSIONS_PER_PRINCIPAL * 3):
                form = await http.get(f"{base}/console/login")
                r = await http.post(f"{base}/console/login", headers={"origin": base},
                                    data={"csrf": csrf_of(form.text), "secret": console_secret(CAROL)})
                assert r.status_code == 303
                http.cookies.clear()
        r = await alice.get("/console/inbox")
        assert r.status_code == 200 and "alice" in r.text.lower()


async def test_a_second_session_cookie_signs_nobody_in(sentinel):
    """A page on another port of this host can set a cookie the console receives (cookies ignore ports):
    beside the person's own session, another principal's under another path. Neither counts then."""
    base, _ = sentinel
    async with signed_in(base, ALICE) as alice, signed_in(base, CAROL) as carol:
        mine = alice.http.cookies.get("sentinel_console")
        theirs = carol.http.cookies.get("sentinel_console")
        for order in ((mine, theirs), (theirs, mine)):
            cookie = f"sentinel_console={order[0]}; sentinel_console={order[1]}"
            async with httpx2.AsyncClient(timeout=30, follow_redirects=False) as raw:
                r = await raw.get(f"{base}/console/inbox", headers={"cookie": cookie})
                assert r.status_code == 303, r.status_code
                assert r.headers["location"].endswith("/console/login")
        assert (await alice.get("/console/inbox")).status_code == 200  # one cookie: still alice's


async def test_over_plain_http_a_cookie_under_the_tls_name_counts_for_nothing(sentinel):
    """Over plain HTTP the console reads ``sentinel_console`` only (a ``__Host-`` cookie needs Secure); a
    cookie under the TLS name (a browser that counts 127.0.0.1 as secure takes one from any port of it) or
    another spelling neither signs anyone in nor replaces the person's own session."""
    base, _ = sentinel
    async with signed_in(base, ALICE) as alice, signed_in(base, CAROL) as carol:
        mine = alice.http.cookies.get("sentinel_console")
        theirs = carol.http.cookies.get("sentinel_console")
        assert mine and theirs
        for other in ("__Host-sentinel_console", "__Secure-sentinel_console", "Sentinel_Console"):
            async with httpx2.AsyncClient(timeout=30, follow_redirects=False) as raw:
                r = await raw.get(f"{base}/console/inbox", headers={"cookie": f"{other}={theirs}"})
                assert r.status_code == 303, (other, r.status_code)
                for cookie in (f"{other}={theirs}; sentinel_console={mine}",
                               f"sentinel_console={mine}; {other}={theirs}"):
                    r = await raw.get(f"{base}/console/inbox", headers={"cookie": cookie})
                    assert r.status_code == 200 and "alice" in r.text and "carol" not in r.text, cookie


async def test_live_streams_are_bounded_per_principal_and_end_with_their_session(sentinel):
    """The principal's share is held by its sessions together (one session holds at most its own bound:
    ``test_console_stream_share.py``); past it, the principal's next stream is refused, another's is not."""
    base, _ = sentinel
    per_session = inbox.MAX_STREAMS_PER_SESSION
    async with signed_in(base, CAROL) as carol, contextlib.AsyncExitStack() as stack:
        others = [await stack.enter_async_context(signed_in(base, CAROL))
                  for _ in range(MAX_STREAMS_PER_PRINCIPAL // per_session)]
        opened: list[httpx2.Response] = []
        for person in [carol, *others[:-1]]:
            for _ in range(per_session):
                stream = person.http.stream("GET", f"{base}/console/events")
                opened.append(await stack.enter_async_context(stream))
        statuses = [r.status_code for r in opened]
        assert statuses == [200] * MAX_STREAMS_PER_PRINCIPAL, statuses
        for _ in range(3):  # the principal's share is full: its last session is refused, never pushes one out
            async with others[-1].http.stream("GET", f"{base}/console/events") as r:
                assert r.status_code == 429
        async with signed_in(base, ALICE) as alice:  # another principal still gets one
            async with alice.http.stream("GET", f"{base}/console/events") as r:
                assert r.status_code == 200
        # signing out ends the session's open streams (they no longer count as someone watching)
        page = await carol.page("/console/inbox")
        await carol.http.post(f"{base}/console/logout", data={"csrf": csrf_of(page)},
                              headers={"origin": base})

        async def drained(r) -> None:
            async for _ in r.aiter_bytes():
                pass

        await asyncio.wait_for(asyncio.gather(*(drained(r) for r in opened[:per_session])), 20)


def test_sessions_are_bounded_per_principal_in_the_table_itself():
    """Past the table's whole size too: a principal signing in without end evicts its own oldest sessions,
    never another principal's (the table dropped the oldest of anyone: 1001 sign-ins signed alice out)."""
    from sentinel_mcp.identity.principal import Principal
    from sentinel_mcp.identity.resolver import Authenticator, TokenResolver

    tokens, secrets = TokenResolver(), TokenResolver()
    alice, carol = Principal("alice", "token"), Principal("carol", "token")
    tokens.add(alice, token="alice-token-0123456789")
    tokens.add(carol, token="carol-token-0123456789")
    secrets.add(alice, token="alice-console-0123456789")
    secrets.add(carol, token="carol-console-0123456789")
    console = auth.ConsoleAuth(Authenticator([tokens]), secrets)
    assert console.sign_in("alice-token-0123456789") is None  # a token is never a sign-in
    signed = console.sign_in("alice-console-0123456789")
    assert signed is not None
    for _ in range(auth.MAX_SESSIONS + 50):
        assert console.sign_in("carol-console-0123456789") is not None
    sid, _ = signed
    assert console.still_signed_in(auth.Viewer(alice, "session:" + sid, sid))
    carols = [p for p, _ in console._sessions.values() if p.name == "carol"]
    assert len(carols) == MAX_SESSIONS_PER_PRINCIPAL


def test_one_principals_answered_items_never_push_out_anothers_question():
    """bob asks and denies thousands of calls: each answered item waits for its retry, and those once counted
    only against the whole inbox (2,000), so alice's open question went; now each principal's items, open or
    answered, count against its own bound."""
    from sentinel_mcp.core.decision import Question

    box = inbox.Inbox()
    q = [Question(key="ok", message="Go?", requested_schema={"type": "object", "properties": {}})]

    def ask(who: str, n: int) -> inbox.InboxItem:
        return box.post(principal=who, session="s", client=None, tool="tb__delete_thing", arguments={"n": n},
                        shown_arguments={"n": n}, version="v", reason="confirm", questions=q, kind="held")

    alices = ask("alice", 0)
    for n in range(inbox.MAX_ITEMS + 100):
        box.deny(ask("bob", n))
    assert box.get("alice", alices.id) is not None and alices.open
    assert sum(1 for i in box._items.values() if i.principal == "bob") <= inbox.MAX_OPEN_PER_PRINCIPAL


async def test_a_session_with_very_many_facts_lists_a_bounded_number_and_finds_the_rest_by_text(tmp_path):
    """Before, a session's page listed every fact the conversation held (up to 50,000 its reads taught, each
    with a revoke form): a 40 MB page whose rendering held the gateway's event loop, every call, for 3 s on
    each view. Now at most 500 facts and 500 approvals are listed, the page says how many more there are, and
    a filter on the text finds any of them (revocable as before)."""
    import time

    from sentinel_mcp.config import load_config
    from sentinel_mcp.policy.fact_store import Fact, FactStore
    from sentinel_mcp.policy.guard_of_config import facts_db_path

    cfg = console_config(tmp_path)
    sid = "alice/http-00000000000000aa"
    path = facts_db_path(load_config(cfg))
    path.parent.mkdir(parents=True, exist_ok=True)
    store = await FactStore(path).open()
    until = time.time() + 3600
    facts = [  # plain facts of several shapes, and standing approvals (internal facts) beside them
        Fact(session=sid, predicate=pred, args=[i], fact=f"{pred}({i}, '{i:05d}<b>')", provenance="observed",
             source_tool="bk__list_bookings", expires_at=until)
        for pred in ("item", "booking_status", "quoted")
        for i in range(1500)
    ] + [
        Fact(session=sid, predicate="$confirmed", args=[i], fact=f"'$confirmed'(bk__cancel, d{i:05d})",
             provenance="user", expires_at=until)
        for i in range(800)
    ]
    await store.add(facts)
    await store.close()
    with http_sentinel(cfg) as (base, _proc):
        async with signed_in(base, ALICE) as alice:
            page = await alice.page(f"/console/sessions/{sid}")
            assert page.count('name="fact"') <= 1000, page.count('name="fact"')
            assert 'id="unlisted"' in page and "4300 more not listed" in page
            found = await alice.page(f"/console/sessions/{sid}?q=quoted(1499,")
            assert found.count('name="fact"') == 1 and "quoted(1499, &#39;01499&lt;b&gt;&#39;)" in found
            assert 'id="unlisted"' not in found
            r = await alice.post(f"/console/sessions/{sid}/revoke", {"fact": "quoted(1499, '01499<b>')"})
            assert r.status_code == 303, r.text[:300]
            gone = await alice.page(f"/console/sessions/{sid}?q=quoted(1499,")
            assert 'name="fact"' not in gone and "No valid facts containing that text" in gone
            approval = await alice.page(f"/console/sessions/{sid}?q=d00799")
            assert approval.count('name="fact"') == 1


async def test_a_peers_questions_in_the_owners_inbox_never_push_out_the_owners_own():
    """An A2A peer's questions go to the owner's inbox (``person_for``): they counted against the owner's own
    bound there, so a peer's flood of calls that ask evicted the owner's open questions and the approvals
    waiting for their retry. Now each item counts against the principal whose call asked."""
    from sentinel_mcp.console.person_questions import PersonQuestions
    from sentinel_mcp.core.decision import Answer, Question
    from sentinel_mcp.gateway.person_inbox import PersonQuestion

    box = inbox.Inbox()
    q = [Question(key="ok", message="Go?", requested_schema={"type": "object", "properties": {}})]
    owners = box.post(principal="owner", session="s", client=None, tool="tb__delete_thing",
                      arguments={"n": 0}, shown_arguments={"n": 0}, version="v", reason="confirm",
                      questions=q, kind="held")
    approved = box.post(principal="owner", session="s", client=None, tool="tb__delete_thing",
                        arguments={"n": 1}, shown_arguments={"n": 1}, version="v", reason="confirm",
                        questions=q, kind="held")
    box.answer(approved, {"ok": Answer(action="accept", content={})})
    assert approved.waiting_for_retry

    class Port:  # what PersonQuestions reads of the gateway: the tool (none: nothing to redact), the version
        guard = type("G", (), {"version": "v"})()

        def find_tool(self, name: str) -> None:
            return None

    asking = PersonQuestions(box, Port(), wait_seconds=600)
    def asked(n: int) -> PersonQuestion:
        peer = f"peer{n % 3}"
        return PersonQuestion(caller=peer, origin="a2a", session=f"{peer}/a2a-{n}", client=None,
                              tool="tb__delete_thing", arguments={"n": n}, questions=q, reason="asks")

    flood = 3 * inbox.MAX_OPEN_PER_PRINCIPAL + 30
    peers = [asyncio.ensure_future(asking.ask(asked(n))) for n in range(flood)]
    for _ in range(5):
        await asyncio.sleep(0)
    try:
        assert box.get("owner", owners.id) is not None and owners.open
        assert approved in box.answered_items("owner") and approved.waiting_for_retry
        for n in range(3):  # each peer's flood evicted its own oldest
            assert sum(1 for i in box._items.values() if i.session.startswith(f"peer{n}/")) <= (
                inbox.MAX_OPEN_PER_PRINCIPAL)
    finally:
        for t in peers:
            t.cancel()
        await asyncio.gather(*peers, return_exceptions=True)
