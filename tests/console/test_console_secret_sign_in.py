"""The console's sign-in form takes a principal's console secret, never a token a client holds.

What broke (red team, console): the form took the same token the MCP and A2A fronts accept. A client holds its
principal's token (the owner's client the owner's), so it (or the model driving it) could post the form, get a
real console session and approve the question its own call waits on: it answered for the user. Now every
principal's token, in any spelling, signs nobody in; a principal without a console secret cannot sign in by
the form (the page and the refusal say so); and the console secret is no bearer on /mcp, /sse, /a2a or the
console's own pages. The owner's secret here is the generated one, read from the data dir as the person
would.
"""

from __future__ import annotations

import hashlib
import json
import urllib.parse

import httpx2
import pytest
from tests.console.console_rig import (
    ALICE,
    BOB,
    CAROL,
    OWNER_TOKEN,
    console_config,
    console_secret,
    csrf_of,
    http_sentinel,
)

pytestmark = pytest.mark.timeout(180)

DAVE = "dave-token-0123456789abcdef00"  # a principal with a token and no console secret
A2A_KEY = "peer-key-0123456789abcdef"  # an A2A peer's key: a token of the A2A front


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("console-secret")
    cfg = console_config(tmp)
    body = json.loads(cfg.read_text())
    del body["sentinel"]["http"]["console_secret"]  # the owner's is generated on first start
    body["sentinel"]["principals"].append({"name": "dave", "token": DAVE})
    body["sentinel"]["a2a"]["api_keys"] = {"rover": A2A_KEY}
    cfg.write_text(json.dumps(body))
    with http_sentinel(cfg) as (base, _proc):
        path = tmp / "state" / "console-secret"
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        yield base, path.read_text().strip()


def spellings(token: str) -> list[str]:
    """A client's token as it might post it: whole, padded, in another case, as its digest, as a header."""
    digest = hashlib.sha256(token.encode()).hexdigest()
    return [token, f"  {token}  ", f"{token}\n", f"\t{token}", token.upper(), token.swapcase(),
            token.title(), digest, digest.upper(), f"sha256:{digest}", f"Bearer {token}", f"bearer {token}",
            f"Bearer  {token} ", urllib.parse.quote(token, safe=""), f"{token}\x00", f"{token}\u200b"]


async def post_sign_in(http: httpx2.AsyncClient, base: str, fields: list[tuple[str, str]],
                       headers: dict[str, str] | None = None) -> httpx2.Response:
    form = await http.get(f"{base}/console/login")
    assert form.status_code == 200, form.status_code
    body = urllib.parse.urlencode([("csrf", csrf_of(form.text)), *fields])
    return await http.post(
        f"{base}/console/login", content=body.encode(),
        headers={"origin": base, "content-type": "application/x-www-form-urlencoded", **(headers or {})},
    )


async def no_session(http: httpx2.AsyncClient, base: str, r: httpx2.Response, what: object) -> None:
    assert r.status_code in (401, 429), (what, r.status_code, r.text[:300])  # 429: the failures' rate limit
    assert "sentinel_console=" not in r.headers.get("set-cookie", ""), what
    page = await http.get(f"{base}/console/inbox")
    assert page.status_code == 303 and page.headers["location"] == "/console/login", (what, page.status_code)


async def test_no_token_a_client_holds_signs_anyone_in(sentinel):
    base, _owner_secret = sentinel
    for token in (OWNER_TOKEN, ALICE, BOB, CAROL, DAVE, A2A_KEY):
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
            for spelling in spellings(token):
                for fields in ([("secret", spelling)], [("token", spelling)],
                               [("secret", spelling), ("token", spelling)]):
                    # past 20 failures a minute the answer is 429 and nothing is checked any more
                    r = await post_sign_in(http, base, fields)
                    await no_session(http, base, r, (token[:6], spelling, fields))
        # the token beside it as a bearer header (a script's own credential) signs nobody in either
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
            # (the header alone is a script's read-only viewer: the refusal may redirect it to the inbox)
            r = await post_sign_in(http, base, [("secret", token)], {"authorization": f"Bearer {token}"})
            assert "sentinel_console=" not in r.headers.get("set-cookie", ""), (token[:6], r.status_code)
            page = await http.get(f"{base}/console/inbox")
            assert page.status_code == 303 and page.headers["location"] == "/console/login", token[:6]


def test_no_token_in_any_spelling_is_a_console_secret(tmp_path, monkeypatch):
    """The whole matrix above, in the process: over HTTP, past 20 wrong secrets from one address the form is
    closed and nothing more is checked (test_console_sign_in_limit.py), so every spelling is checked here by
    the console's own sign-in with the resolvers the running Sentinel builds from the same config."""
    from sentinel_mcp.config import load_config
    from sentinel_mcp.console.auth import ConsoleAuth
    from sentinel_mcp.identity.credentials import Credentials
    from sentinel_mcp.identity.http_auth import http_auth_for

    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["sentinel"]["principals"].append({"name": "dave", "token": DAVE})
    body["sentinel"]["a2a"]["api_keys"] = {"rover": A2A_KEY}
    cfg.write_text(json.dumps(body))
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path / "state"))
    auth = http_auth_for(load_config(cfg))
    console = ConsoleAuth(auth.authenticator, auth.console_secrets)
    checked = 0
    for token in (OWNER_TOKEN, ALICE, BOB, CAROL, DAVE, A2A_KEY):
        for spelling in spellings(token):
            assert console.sign_in(spelling, Credentials(peer="127.0.0.1")) is None, (token[:6], spelling)
            checked += 1
    assert checked == 6 * len(spellings(OWNER_TOKEN))
    assert console.sign_in(console_secret(OWNER_TOKEN), Credentials(peer="127.0.0.1")) is not None


async def test_the_refusal_and_the_page_say_a_console_secret_is_needed(tmp_path_factory, sentinel):
    base, owner_secret = sentinel
    async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
        page = await http.get(f"{base}/console/login")
        assert "console secret" in page.text and "cannot sign in" in page.text, page.text[:2000]
        assert 'name="secret"' in page.text and 'name="token"' not in page.text
        r = await post_sign_in(http, base, [("secret", DAVE)])
        if r.status_code == 401:  # (429 once the test above filled this address's count)
            assert "not a console secret" in r.text and "never a token" in r.text, r.text[:2000]
        # the owner's console secret signs the owner in, unless the failures before it closed the form to
        # this address (then every secret is refused unchecked: test_console_sign_in_limit.py)
        r = await post_sign_in(http, base, [("secret", owner_secret)])
        if r.status_code == 429:
            assert "console-link" in r.text, r.text[:2000]
            return
        assert r.status_code == 303 and r.headers["location"] == "/console/inbox", r.status_code
        page = await http.get(f"{base}/console/inbox")
        assert page.status_code == 200


async def test_a_console_secret_is_no_bearer_on_any_front(sentinel):
    base, owner_secret = sentinel
    mcp_body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}
    a2a_body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
    from tests.identity.identity_rig import console_secret

    async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
        for secret in (owner_secret, console_secret(ALICE), console_secret(BOB)):
            for header in ({"authorization": f"Bearer {secret}"}, {"x-api-key": secret}):
                r = await http.post(f"{base}/mcp", json=mcp_body, headers={
                    "accept": "application/json, text/event-stream", **header})
                assert r.status_code == 401, ("mcp", header, r.status_code)
                r = await http.post(f"{base}/a2a", json=a2a_body, headers={"A2A-Version": "1.0", **header})
                assert r.status_code == 401, ("a2a", header, r.status_code)
                r = await http.get(f"{base}/sse", headers=header)
                assert r.status_code == 401, ("sse", header, r.status_code)
                r = await http.get(f"{base}/console/inbox", headers=header)
                assert r.status_code != 200, ("console", header, r.status_code)
        # the tokens themselves still work there (the control: the refusals above are the secret's)
        r = await http.post(f"{base}/a2a", json=a2a_body,
                            headers={"A2A-Version": "1.0", "authorization": f"Bearer {ALICE}"})
        assert r.status_code == 200, r.status_code
