"""Every answer of every route the HTTP front serves, over real HTTP on 127.0.0.1, by every method a client
may send: it carries the safe headers (not sniffed, not framed, not cached, no referrer), it is never HTML
unless it is a console page under the console's CSP, HEAD answers as GET does, and a method no route takes
is a 405 naming what the route takes (never a traceback).

The routes are read from the assembled app itself (``serve.http_server``), so a route added later is walked
without editing this file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx2
import pytest
from starlette.routing import Mount, WebSocketRoute
from tests.console.console_rig import ALICE, OWNER_TOKEN, console_config, http_sentinel, signed_in

from sentinel_mcp.app.safe_headers import with_safe_headers
from sentinel_mcp.app.serve import http_server
from sentinel_mcp.config import load_config

pytestmark = pytest.mark.timeout(300)
# PROPFIND: a method the parser knows and no route takes; BOGUS: one the parser itself refuses (400)
METHODS = ("GET", "HEAD", "POST", "OPTIONS", "TRACE", "PROPFIND", "BOGUS")
SAFE = {"x-content-type-options": "nosniff", "x-frame-options": "DENY"}
REFUSED = ("OPTIONS", "TRACE", "PROPFIND")  # taken by no route (a GET may reach another route's pattern)
PARAM = re.compile(r"\{[^}]*\}")


def _routes_of(app: Any) -> list[tuple[str, frozenset[str] | None]]:
    """(a path that reaches the route, the methods it takes or None when it names none) for every route."""
    while not hasattr(app, "router"):  # the middleware around the app
        app = app.app
    found: list[tuple[str, frozenset[str] | None]] = []

    def walk(routes: list[Any], prefix: str) -> None:
        for route in routes:
            sub = getattr(route, "routes", None)
            if sub:
                walk(sub, prefix + route.path)
                continue
            path = getattr(route, "path", None)
            if not isinstance(path, str) or not path.startswith("/"):  # the console's static files
                path = "/static/console.css"
            if isinstance(route, Mount):
                path += "/"
            methods = getattr(route, "methods", None)
            if isinstance(route, WebSocketRoute):
                methods = set()  # no plain HTTP method at all
            found.append((prefix + PARAM.sub("x", path), frozenset(methods) if methods is not None else None))

    walk(app.router.routes, "")
    merged: dict[str, frozenset[str] | None] = {}  # a path several routes share (GET and POST /console/login)
    for path, methods in found:
        before = merged.get(path, frozenset())
        merged[path] = None if methods is None or before is None else before | methods
    return list(merged.items())


@pytest.fixture(scope="module")
def front(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("answer-headers"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SENTINEL_DATA_DIR", str(Path(cfg).parent / "state"))
        routes = _routes_of(http_server(load_config(cfg), "127.0.0.1", 1).config.app)
    with http_sentinel(cfg) as (base, _proc):
        yield base, routes


def _check(path: str, method: str, r: httpx2.Response) -> None:
    where = (method, path, r.status_code)
    assert r.status_code < 500, where  # no traceback, no plain 500
    for name, value in SAFE.items():
        assert r.headers.get_list(name) == [value], (where, name, r.headers.get_list(name))
    # the console's own: same-origin for its forms, strict-origin on a one-time link's page
    referrer = r.headers.get_list("referrer-policy")
    assert referrer == ["no-referrer"] or (path.startswith("/console") and referrer in (
        ["same-origin"], ["strict-origin"])), (where, referrer)
    assert "no-store" in r.headers.get("cache-control", ""), (where, r.headers.get("cache-control"))
    csp = r.headers.get_list("content-security-policy")
    assert len(csp) == 1 and "frame-ancestors 'none'" in csp[0], (where, csp)
    if "html" in r.headers.get("content-type", "").lower():  # a console page, under the console's own CSP
        assert path.startswith("/console") and "script-src 'self'" in csp[0], (where, csp)


async def _ask(http: httpx2.AsyncClient, base: str, path: str, method: str, **kw: Any) -> httpx2.Response:
    """The answer's head (a stream, /sse or the console's live updates, is not read on)."""
    async with http.stream(method, base + path, **kw) as r:
        return r


async def _walk(http: httpx2.AsyncClient, base: str, routes: list[tuple[str, frozenset[str] | None]],
                **kw: Any) -> None:
    for path, methods in [*routes, ("/no-such-route", frozenset()), ("/console/no-such-page", frozenset())]:
        got: dict[str, httpx2.Response] = {}
        for method in METHODS:
            r = got[method] = await _ask(http, base, path, method, **kw)
            _check(path, method, r)
            if method == "BOGUS":
                assert r.status_code == 400, (path, r.status_code)
            elif methods and method in REFUSED and r.status_code not in (401, 403):
                # refused for its method: 405 and what the route takes (a stranger may be refused first)
                assert r.status_code == 405, (method, path, r.status_code)
                allowed = {m.strip() for m in r.headers.get("allow", "").split(",")}
                # at a path two routes share, Starlette names the first one's methods (left as it is)
                assert allowed and allowed <= set(methods), (method, path, allowed)
        assert got["HEAD"].status_code == got["GET"].status_code, (path, got["HEAD"], got["GET"])
        if got["GET"].status_code in (301, 302, 303, 307, 308):
            assert got["HEAD"].headers.get("location") == got["GET"].headers.get("location"), path


async def test_every_answer_of_every_route_carries_the_safe_headers_to_a_stranger(front):
    """Before, /mcp, /sse, /messages/, /healthz, /metrics, /a2a and the agent card were sniffable and
    framable, and HEAD /console/inbox answered 401 where GET sent the person to sign in (303)."""
    base, routes = front
    async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
        await _walk(http, base, routes)


async def test_every_answer_of_every_route_carries_the_safe_headers_to_the_owner(front):
    """The same walk as a principal (bearer token) who is also signed in to the console: the answers that hold
    its data (the health, the metrics, the console's pages) are never stored by a cache."""
    base, routes = front
    async with signed_in(base, ALICE) as person:
        person.http.headers["authorization"] = f"Bearer {OWNER_TOKEN}"
        # HEAD /mcp as GET too (the SDK's transport answered it 405: mcp_head.py)
        await _walk(person.http, base, routes, headers={"accept": "application/json, text/event-stream"})


def test_an_apps_own_weaker_headers_do_not_survive():
    """An app (or an upstream's header passed on, later) naming its own framing, sniffing or caching gets the
    safe ones instead; its own CSP and referrer policy stand (the console's), its caching gains no-store."""
    got = with_safe_headers([(b"X-Frame-Options", b"ALLOWALL"), (b"x-content-type-options", b"sniff"),
                             (b"Cache-Control", b"no-cache, no-transform"),
                             (b"content-security-policy", b"script-src 'self'; frame-ancestors 'none'")])
    names = [k.lower() for k, _ in got]
    assert len(names) == len(set(names)), got
    found = {k.lower(): v for k, v in got}
    assert found[b"x-frame-options"] == b"DENY" and found[b"x-content-type-options"] == b"nosniff"
    assert found[b"cache-control"] == b"no-store, no-cache, no-transform"
    assert found[b"content-security-policy"] == b"script-src 'self'; frame-ancestors 'none'"
    assert found[b"referrer-policy"] == b"no-referrer"
