"""The web console on the TLS front: a browser's client certificate is its principal (no sign-in), a session
signed in with a token counts only while the browser's certificate names the same principal, a certificate
that names nobody cannot sign in, and the console's cookies are Secure."""

from __future__ import annotations

import re

import httpx2
import pytest
from tests.identity.identity_rig import BOB, console_secret
from tests.tls.tls_rig import client_context, https_sentinel, subject_of, tls_config

pytestmark = pytest.mark.timeout(240)
CSRF = re.compile(r'name="csrf" value="([0-9a-f]{64})"')


async def test_console_over_mutual_tls(tmp_path, pki):
    cfg = tls_config(tmp_path, pki)  # optional: alice by certificate, bob by certificate or token
    with https_sentinel(cfg, pki) as (base, _):
        def browser(who=None, **kw) -> httpx2.AsyncClient:
            return httpx2.AsyncClient(
                verify=client_context(pki, who), timeout=30, follow_redirects=False, **kw
            )

        async with browser() as plain:  # no certificate: the token sign-in, cookies Secure over TLS
            form = await plain.get(f"{base}/console/login")
            assert form.status_code == 200 and "secure" in form.headers["set-cookie"].lower()
            r = await plain.post(
                f"{base}/console/login",
                data={"csrf": CSRF.search(form.text)[1], "secret": console_secret(BOB)},
                headers={"origin": base},
            )
            assert r.status_code == 303 and r.headers["location"] == "/console/inbox", r.text[:500]
            assert "secure" in r.headers["set-cookie"].lower()
            # the __Host- prefix: a browser takes it only from this secure origin, so a plain page on another
            # port of this host cannot put a session of its own in its place (cookies do not tell ports apart)
            assert r.headers["set-cookie"].startswith("__Host-sentinel_console=")
            assert "sentinel_console" not in {c for c in plain.cookies if not c.startswith("__Host-")}
            session = {"__Host-sentinel_console": plain.cookies["__Host-sentinel_console"]}
            assert (await plain.get(f"{base}/console/inbox")).status_code == 200
        async with browser(pki.alice) as alice:  # her certificate is her principal: straight in
            page = await alice.get(f"{base}/console/inbox")
            assert page.status_code == 200 and "alice" in page.text
            # to read: the sign-in form is still hers, to answer (a certificate alone sends no form:
            # test_console_certificate_answers_nothing)
            assert (await alice.get(f"{base}/console/login")).status_code == 200
        async with browser(pki.alice, cookies=session) as swapped:  # bob's session under alice's certificate
            r = await swapped.get(f"{base}/console/inbox")
            assert r.status_code == 303 and r.headers["location"] == "/console/login"
        async with browser(pki.bob, cookies=session) as bob:  # the same session under bob's own certificate
            page = await bob.get(f"{base}/console/inbox")
            assert page.status_code == 200 and "bob" in page.text
        async with browser(pki.carol) as carol:  # a certificate of the CA that names nobody
            assert (await carol.get(f"{base}/console/inbox")).status_code == 303
            form = await carol.get(f"{base}/console/login")
            r = await carol.post(
                f"{base}/console/login",
                data={"csrf": CSRF.search(form.text)[1], "secret": console_secret(BOB)},
                headers={"origin": base},
            )
            assert r.status_code == 401 and "sentinel_console=" not in r.headers.get("set-cookie", "")
        async with browser(cookies={"sentinel_console": session["__Host-sentinel_console"]}) as tossed:
            # the session id under the plain name (what a page elsewhere could set) opens nothing over TLS
            r = await tossed.get(f"{base}/console/inbox")
            assert r.status_code == 303 and r.headers["location"] == "/console/login"


async def test_a_console_live_stream_ends_when_its_certificate_is_revoked(tmp_path, pki):
    """The console's live stream (``/console/events``) is one long request: it went on telling a revoked
    certificate's holder the inbox count, and kept the person "watching" (calls held for an answer), because
    only the session table was looked at again. It now ends as soon as the request's credentials no longer
    give the same viewer, by certificate alone or by a session under that certificate."""
    import asyncio

    cfg = tls_config(tmp_path, pki)
    with https_sentinel(cfg, pki) as (base, _):
        async with httpx2.AsyncClient(
            verify=client_context(pki, pki.alice), timeout=60, follow_redirects=False
        ) as alice:
            async with alice.stream("GET", f"{base}/console/events") as stream:
                assert stream.status_code == 200
                chunks = stream.aiter_bytes()
                assert b"event: inbox" in await chunks.__anext__()
                pki.ca.revoke(f"{pki.alice.serial:x}")

                async def drained() -> None:
                    async for _ in chunks:
                        pass

                await asyncio.wait_for(drained(), 90)  # a guard against a hang, not a measure of time


MALLORY = "mallory-token-0123456789abcdef"


async def test_over_tls_console_cookies_are_host_only_and_a_tossed_one_of_another_name_counts_for_nothing(
    tmp_path, pki
):
    """Cookie tossing: a page of a sibling subdomain (or, for a ``__Secure-`` name, any secure page that may
    set a cookie for this host's domain) could set a console cookie beside or before the person's own, and a
    plain page of this host one without a prefix. Over TLS the session and the sign-in form's cookie are
    ``__Host-`` cookies (Secure, ``Path=/``, no ``Domain``: a browser takes them only from this very origin),
    and a console cookie under any other name counts for nothing there: mallory's session planted under the
    old ``__Secure-`` name or the plain one neither signs the person in as mallory nor replaces theirs."""
    principals = [
        {"name": "alice", "certificate": subject_of("alice")},
        {"name": "bob", "token": BOB, "console_secret": console_secret(BOB)},
        {"name": "mallory", "token": MALLORY, "console_secret": console_secret(MALLORY)},
    ]
    cfg = tls_config(tmp_path, pki, principals=principals)
    with https_sentinel(cfg, pki) as (base, _):
        async def sign_in(token: str) -> str:
            async with httpx2.AsyncClient(verify=client_context(pki), timeout=30) as http:
                form = await http.get(f"{base}/console/login")
                login_cookie = form.headers["set-cookie"]
                assert login_cookie.startswith("__Host-sentinel_console_login="), login_cookie
                attrs = [a.strip().lower() for a in login_cookie.split(";")[1:]]
                assert "secure" in attrs and "path=/" in attrs, attrs
                assert not any(a.startswith("domain") for a in attrs), attrs
                r = await http.post(
                    f"{base}/console/login",
                    data={"csrf": CSRF.search(form.text)[1], "secret": console_secret(token)},
                    headers={"origin": base},
                )
                assert r.status_code == 303, r.text[:500]
                session = r.headers["set-cookie"]
                assert session.startswith("__Host-sentinel_console="), session
                attrs = [a.strip().lower() for a in session.split(";")[1:]]
                assert "secure" in attrs and "httponly" in attrs and "path=/" in attrs, attrs
                assert not any(a.startswith("domain") for a in attrs), attrs
                return session.split(";", 1)[0].split("=", 1)[1]

        bob, mallory = await sign_in(BOB), await sign_in(MALLORY)
        async with httpx2.AsyncClient(verify=client_context(pki), timeout=30) as http:
            async def viewer(cookie: str) -> str | None:
                r = await http.get(f"{base}/console/inbox", headers={"cookie": cookie})
                if r.status_code == 303:
                    return None
                assert r.status_code == 200, r.status_code
                return "mallory" if "mallory" in r.text else "bob" if "bob" in r.text else "?"

            assert await viewer(f"__Host-sentinel_console={bob}") == "bob"
            for other in ("__Secure-sentinel_console", "sentinel_console", "__host-sentinel_console"):
                # planted alone: nobody is signed in (before, a __Secure- one signed the person in as mallory)
                assert await viewer(f"{other}={mallory}") is None, other
                # planted beside or before the person's own: the person is still themselves
                assert await viewer(f"{other}={mallory}; __Host-sentinel_console={bob}") == "bob", other
                assert await viewer(f"__Host-sentinel_console={bob}; {other}={mallory}") == "bob", other


TOKEN_FIELD = re.compile(r'name="token" value="([^"]*)"')


async def test_a_link_posted_under_another_principals_certificate_is_refused_and_not_spent(tmp_path, pki):
    """The owner's one-time link (``config console-link``) signs in only a browser whose client certificate
    (if any) is the owner's. A browser presenting another principal's certificate was refused, but only after
    the link had been claimed: whoever held the link and a certificate of their own spent the owner's way in.
    The certificate is now checked first, and the owner's own browser can still use the link."""
    from sentinel_mcp.identity import console_link

    cfg = tls_config(tmp_path, pki)  # the owner signs in by its generated console secret, or by a link
    with https_sentinel(cfg, pki) as (base, _):
        token = console_link.create(cfg.parent / "state")

        async def post_link(who) -> httpx2.Response:
            async with httpx2.AsyncClient(verify=client_context(pki, who), timeout=30,
                                          follow_redirects=False) as http:
                page = await http.get(f"{base}/console/login/once/{token}")
                assert page.status_code == 200, page.status_code
                return await http.post(f"{base}/console/login/once", headers={"origin": base},
                                       data={"csrf": CSRF.search(page.text)[1], "token": token})

        for who in (pki.alice, pki.carol):  # another principal's certificate, and one naming nobody
            r = await post_link(who)
            assert r.status_code == 401 and "sentinel_console=" not in r.headers.get("set-cookie", "")
        r = await post_link(None)  # the owner's own browser (no certificate): the link is still whole
        assert r.status_code == 303 and r.headers["location"] == "/console/inbox", r.status_code
        assert r.headers["set-cookie"].startswith("__Host-sentinel_console=")
