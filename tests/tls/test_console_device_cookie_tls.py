"""The console's device cookie (``console/sign_in_devices.py``) over a real TLS front. A browser its principal
signed in on carries it, and there a sign-in under that principal's name is counted against the device alone
(a flood at the name from elsewhere does not lock the principal out of it). Over TLS it is a ``__Host-``
cookie: Secure, ``Path=/``, no ``Domain`` (a browser takes it only from this very origin), HttpOnly,
SameSite=Strict, with its lifetime. What must count for nothing once the name is blocked: the token under
the plain name (what a browser sends over plain HTTP, or a plain page of this host could set), another
principal's token, one signed with another key, one past its ``DEVICE_SECONDS`` (the cookie's Max-Age is
the browser's to honour; a token kept past it, or copied off the machine, went on working for ever)."""

from __future__ import annotations

import re
import socket
import urllib.parse

import httpx2
import pytest
from tests.identity.identity_rig import BOB, console_secret
from tests.tls.tls_rig import client_context, https_sentinel, subject_of, tls_config

from sentinel_mcp.console.sign_in_devices import DEVICE_SECONDS, SignInDevices
from sentinel_mcp.console.sign_in_limit import MAX_FAILED_PER_ADDRESS_AND_NAME
from sentinel_mcp.core import process_clock

pytestmark = pytest.mark.timeout(240)
CSRF = re.compile(r'name="csrf" value="([0-9a-f]{64})"')
MALLORY = "mallory-token-0123456789abcdef"
DEVICE = "__Host-sentinel_console_device"


async def sign_in(http: httpx2.AsyncClient, base: str, secret: str, name: str) -> httpx2.Response:
    form = await http.get(f"{base}/console/login")
    assert form.status_code == 200, form.status_code
    fields = [("csrf", CSRF.search(form.text)[1]), ("secret", secret), ("name", name)]
    return await http.post(f"{base}/console/login", content=urllib.parse.urlencode(fields).encode(),
                           headers={"origin": base, "content-type": "application/x-www-form-urlencoded"})


def set_cookies(r: httpx2.Response) -> dict[str, list[str]]:
    """Each Set-Cookie of the response by its name: its attributes, lower-cased."""
    found = {}
    for line in r.headers.get_list("set-cookie"):
        first, *attrs = line.split(";")
        found[first.split("=", 1)[0].strip()] = [a.strip().lower() for a in attrs]
    return found


def session_set(r: httpx2.Response) -> bool:
    return "__Host-sentinel_console" in set_cookies(r)


class _ClockAt:
    def __init__(self, at: float) -> None:
        self.at = at

    def now(self) -> float:
        return self.at


async def test_the_device_cookie_over_tls(tmp_path, pki, monkeypatch):
    principals = [
        {"name": "alice", "certificate": subject_of("alice")},
        {"name": "bob", "token": BOB, "console_secret": console_secret(BOB)},
        {"name": "mallory", "token": MALLORY, "console_secret": console_secret(MALLORY)},
    ]
    cfg = tls_config(tmp_path, pki, principals=principals)
    state = cfg.parent / "state"

    def browser(**kw) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(verify=client_context(pki), timeout=30, follow_redirects=False, **kw)

    with https_sentinel(cfg, pki) as (base, _):
        async with browser() as bobs:  # bob's own browser: an ordinary day's sign-in marks it
            r = await sign_in(bobs, base, console_secret(BOB), "bob")
            assert r.status_code == 303 and session_set(r), r.status_code
            cookies = set_cookies(r)
            assert DEVICE in cookies and "sentinel_console_device" not in cookies, cookies
            attrs = cookies[DEVICE]
            wanted = {"secure", "httponly", "path=/", "samesite=strict", f"max-age={DEVICE_SECONDS}"}
            assert wanted <= set(attrs), attrs
            assert not any(a.startswith("domain") for a in attrs), attrs
            token = bobs.cookies[DEVICE]
        async with browser() as mallorys:
            assert (await sign_in(mallorys, base, console_secret(MALLORY), "mallory")).status_code == 303
            mallory_token = mallorys.cookies[DEVICE]

        async with browser() as guesser:  # then a guesser from this address, under bob's name
            statuses = [(await sign_in(guesser, base, f"wrong-{i:03d}-0123456789", "bob")).status_code
                        for i in range(MAX_FAILED_PER_ADDRESS_AND_NAME + 1)]
            # the last wrong one blocks (and is answered so)
            assert statuses == [401] * MAX_FAILED_PER_ADDRESS_AND_NAME + [429], statuses
            r = await sign_in(guesser, base, console_secret(BOB), "bob")  # blocked: unchecked, refused
            assert r.status_code == 429 and not session_set(r), r.status_code

        async def with_device(cookies: dict[str, str]) -> int:
            async with browser(cookies=cookies) as http:
                r = await sign_in(http, base, console_secret(BOB), "bob")
                assert r.status_code in (303, 429), r.status_code
                assert (r.status_code == 303) == session_set(r)
                return r.status_code

        assert await with_device({DEVICE: token}) == 303  # bob's own browser still signs him in

        (tmp_path / "elsewhere").mkdir()
        other_key = SignInDevices(tmp_path / "elsewhere")  # a console with a key of its own
        here = SignInDevices(state)  # this console's key, read from its data dir (as a restart would)
        assert here.device(token, "bob") is not None  # the test's own key is really the server's
        monkeypatch.setattr(process_clock, "CLOCK", _ClockAt(process_clock.now() - DEVICE_SECONDS - 1))
        expired = here.issue("bob")  # issued past its time ago (signed with the server's own key)
        monkeypatch.undo()
        refused = {
            "plain name": {"sentinel_console_device": token},
            "__Secure- name": {"__Secure-sentinel_console_device": token},
            "another principal's": {DEVICE: mallory_token},
            "another key's": {DEVICE: other_key.issue("bob")},
            "expired": {DEVICE: expired},
        }
        for what, cookies in refused.items():
            assert await with_device(cookies) == 429, what

        # over plain HTTP (a browser that sends the cookie there): the TLS front serves nothing
        host, port = urllib.parse.urlsplit(base).hostname, urllib.parse.urlsplit(base).port
        with socket.create_connection((host, port), timeout=30) as plain:
            plain.sendall(b"GET /console/inbox HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: " + DEVICE.encode()
                          + b"=" + token.encode() + b"\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := plain.recv(65536):
                answer += chunk
        assert b"set-cookie" not in answer.lower() and b"inbox" not in answer.lower(), answer[:300]

        assert await with_device({DEVICE: token}) == 303  # and bob's browser is still his
