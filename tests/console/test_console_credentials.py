"""Which credentials make a console viewer, and which viewer may answer for the person.

A client holds its principal's token and sends it as a bearer header: with it, it could read the inbox (and
the CSRF token the page carries) and approve the very question its own call is waiting on, with provenance
``user``. A header is a script's, never the person's: it reads pages, it answers nothing. And a request whose
credentials disagree (a session cookie and another principal's, or no principal's, bearer token) is nobody's.
"""

from __future__ import annotations

import uuid

import httpx2
import pytest
from tests.console.console_rig import (
    ALICE,
    BOB,
    console_config,
    console_secret,
    csrf_of,
    http_sentinel,
    items_of,
    mcp_client,
    signed_in,
    text,
)

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("console-credentials"))
    with http_sentinel(cfg) as (base, _proc):
        yield base


async def test_a_bearer_header_reads_the_inbox_but_never_answers_for_the_person(sentinel):
    base = sentinel
    async with signed_in(base, BOB) as person, mcp_client(base, BOB) as c:
        args = {"name": f"bob-{uuid.uuid4().hex[:6]}"}
        first = await c.call_tool("tb__delete_thing", args)
        assert first.is_error and "/console/inbox" in text(first)
        [item] = items_of(await person.wait_items(1))
        for header in ({"authorization": f"Bearer {BOB}"}, {"x-api-key": BOB}):
            async with httpx2.AsyncClient(timeout=60, follow_redirects=False, headers=header) as script:
                page = await script.get(f"{base}/console/inbox")
                assert page.status_code == 200 and item in items_of(page.text)  # a script may read
                r = await script.post(
                    f"{base}/console/inbox/{item}",
                    data={"decision": "approve", "csrf": csrf_of(page.text)},
                    headers={"origin": base},
                )
                assert r.status_code == 403, (header, r.status_code, r.text[:300])
                # nor any other form: a header's forms are none of the person's
                r = await script.post(
                    f"{base}/console/logout", data={"csrf": csrf_of(page.text)}, headers={"origin": base}
                )
                assert r.status_code == 403, (header, r.status_code)
        assert item in items_of(await person.page("/console/inbox"))  # still open: nobody answered
        again = await c.call_tool("tb__delete_thing", args)
        assert again.is_error  # the retry does not pass on a header's "approval"
        # the person, signed in, still answers
        assert (await person.post(f"/console/inbox/{item}", {"decision": "deny"})).status_code == 303


async def test_a_session_cookie_with_another_or_a_wrong_token_beside_it_is_nobody(sentinel):
    base = sentinel
    async with signed_in(base, ALICE) as alice:
        for header in ({"authorization": f"Bearer {BOB}"}, {"authorization": "Bearer not-a-token-at-all-xx"},
                       {"x-api-key": BOB}, {"authorization": "Basic YWxpY2U6eA=="}):
            r = await alice.get("/console/consents", headers=header)
            assert r.status_code == 303, (header, r.status_code)
            assert r.headers["location"].endswith("/console/login")
            tok = csrf_of(await alice.page("/console/inbox"))
            r = await alice.http.post(
                f"{base}/console/consents/revoke", data={"csrf": tok, "kind": "k", "purpose": "p"},
                headers={"origin": base, **header},
            )
            assert r.status_code == 401, (header, r.status_code)
        # her own token beside her own session agrees: still her
        r = await alice.get("/console/consents", headers={"authorization": f"Bearer {ALICE}"})
        assert r.status_code == 200 and "alice" in r.text
        assert (await alice.get("/console/consents")).status_code == 200


async def test_signing_in_again_ends_the_session_the_browser_held(sentinel):
    """Sign-in rotates: the session the browser's cookie named before (its own principal's or another's,
    from a sign-in form loaded in another tab) ends on the server, not only in this browser's cookie jar.
    Before, the old id stayed good for its 12 hours: a copy of it (a stolen cookie, a planted one) outlived
    the person signing in again."""
    base = sentinel
    for before in (ALICE, BOB):
        async with signed_in(base, before) as held:
            old = held.http.cookies.get("sentinel_console")
            assert old and (await held.get("/console/inbox")).status_code == 200
            async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as tab:
                form = await tab.get(f"{base}/console/login")  # the form, loaded before the session began
                nonce = tab.cookies.get("sentinel_console_login")
                r = await tab.post(
                    f"{base}/console/login",
                    content=f"csrf={csrf_of(form.text)}&secret={console_secret(ALICE)}".encode(),
                    headers={"origin": base, "content-type": "application/x-www-form-urlencoded",
                             "cookie": f"sentinel_console_login={nonce}; sentinel_console={old}"},
                )
                assert r.status_code == 303 and r.headers["location"] == "/console/inbox", r.status_code
                new = r.cookies.get("sentinel_console")
                assert new and new != old
            async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as raw:
                r = await raw.get(f"{base}/console/inbox", headers={"cookie": f"sentinel_console={old}"})
                assert r.status_code == 303, (before[:5], r.status_code)  # the held id: nobody's now
                assert r.headers["location"] == "/console/login"
                r = await raw.get(f"{base}/console/inbox", headers={"cookie": f"sentinel_console={new}"})
                assert r.status_code == 200 and "alice" in r.text
