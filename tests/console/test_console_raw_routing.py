"""The console routes on the path as it was sent: split on its literal ``/`` first, each segment decoded
after. The server decoded the whole path first, so an id holding an encoded ``/`` (``%2F``) became two
segments: ``/console/agent/audit%2Fx`` (the run ``audit/x``) reached the audit-row page with ``x``,
``/console/inbox/assist%2Fx`` (the item ``assist/x``) the help-request reply,
``/console/builds/t%2Ffiles%2Fy`` (the build ``t/files/y``) the build's file ``y``.

Every route of every page, with hostile ids in many spellings, over real HTTP on 127.0.0.1 (uvicorn, as
``serve --http`` runs it, the console mounted at /console): each request reaches the handler of its own
route with the exact id sent, or is refused (400), never another route or another id.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, unquote_to_bytes

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse

pytestmark = pytest.mark.timeout(180)

# raw segments (exactly as sent); the id each names is its one percent-decoding
HOSTILE_RAW = [
    "audit%2Fx", "assist%2Fx", "t%2Ffiles%2Fy", "x%2Frevoke", "alice%2F..%2F..%2Fconsents", "a%2fb",
    "alice%2F..%2Fconsents", "a%252Fb", "%252F", "%252e%252e", "a%5Cb", "a%5cb", "%5C", "%2F", "%2f",
    "%2e%2e", "%2E%2e", "%2e", ".%2e", "..", ".", "%2F..%2F", "a%0Ab", "%0A", "a%0D%0Ab", "a%00b", "%00",
    "a%09b", "a%7Fb", "a%C2%85b", "a%E2%88%95b", "%E2%88%95", "a%EF%BC%8Fb", "%EF%BC%8F",
    "%EF%BC%8E%EF%BC%8E",
    "alice%2Fhttp-1", "it%27s%20%22q%22", "%C3%BC", "a;b=c", "a%3Fb", "a%23b", "a%25",
]
# what a refused id may decode to: a dot segment, a slash or backslash alone, control characters
REFUSED_ALONE = {"", ".", "..", "/", "\\"}
# ids no route refuses: a look-alike of a slash is no slash to any reader of a path
ROUTABLE = {"%C3%BC", "it%27s%20%22q%22", "a%E2%88%95b", "%E2%88%95", "a%EF%BC%8Fb", "%EF%BC%8F", "a%252Fb"}
# and those a route of an id that may hold "/" takes (a session id is its principal's name, "/", its name;
# a build's file is its path): one segment as sent, the slash inside the id
SLASHED = {"alice%2Fhttp-1", "a%2Fb", "a%2fb", "audit%2Fx", "a%5Cb"}
# never a segment of the path (it would be read as the end of the path or a query by any client)
PLAIN = "ok-1"
SPREAD = ("with_slash", "key")  # the kinds of id that may hold "/"


def _decoded(raw: str) -> str | None:
    try:
        return unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _must_refuse(value: str | None, kind: str = "id") -> bool:
    if value is None or value in REFUSED_ALONE or "\x00" in value:
        return True
    # a key (a session id) is only looked up, never a path: its other control characters are its own
    return kind != "key" and any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in value)


def _routes() -> list[tuple[str, str, list[str]]]:
    """Every page route: (its handler's name, its path, its methods), from the pages' own tables."""
    from sentinel_mcp.console.app import PAGE_MODULES
    from sentinel_mcp.console.web import Console

    console: Any = Console(None, None, None)  # type: ignore[arg-type]
    return [
        (f"{h.__module__}.{h.__name__}", path, methods)
        for module in PAGE_MODULES
        for path, h, methods, _form in module.routes(console)
    ]


@contextlib.contextmanager
def _serving() -> Iterator[int]:
    import uvicorn

    from sentinel_mcp.console.app import page_routes
    from sentinel_mcp.console.segment_routes import SegmentMount
    from sentinel_mcp.console.web import Console

    def endpoint(handler: Any, form: bool) -> Any:
        name = f"{handler.__module__}.{handler.__name__}"

        async def said(request: Request) -> JSONResponse:
            return JSONResponse({"handler": name, "params": dict(request.path_params)})

        return said

    console: Any = Console(None, None, None)  # type: ignore[arg-type]
    inner = Starlette(routes=page_routes(console, endpoint))
    app = Starlette(routes=[SegmentMount("/console", app=inner)])  # as mount_console mounts it
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)


def _send(port: int, method: str, raw_path: str) -> tuple[int, Any]:
    """``raw_path`` sent as it is (http.client neither decodes nor normalises it)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, raw_path, body=b"" if method == "POST" else None)
        r = conn.getresponse()
        body = r.read()
        try:
            return r.status, json.loads(body)
        except ValueError:
            return r.status, body[:200]
    finally:
        conn.close()


def _filled(path: str, name: str, raw: str) -> tuple[str, dict[str, str]]:
    """The route's path with ``raw`` in the parameter ``name`` and a plain id in every other one."""
    expected: dict[str, str] = {}

    def fill(m: re.Match[str]) -> str:
        param = m.group(1)
        if param == name:
            expected[param] = _decoded(raw) or ""
            return raw
        expected[param] = PLAIN
        return PLAIN

    return re.sub(r"\{(\w+)(?::\w+)?\}", fill, path), expected


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    with _serving() as p:
        yield p


def test_every_route_sees_its_exact_id_or_refuses_it(port):
    checked = 0
    for handler, path, methods in _routes():
        params = dict(re.findall(r"\{(\w+)(?::(\w+))?\}", path))
        for name, kind in params.items():
            for raw in HOSTILE_RAW:
                filled, expected = _filled(path, name, raw)
                for method in methods:
                    status, said = _send(port, method, "/console" + filled)
                    checked += 1
                    where = (method, path, name, raw, status, said)
                    if _must_refuse(expected[name], kind):
                        assert status == 400, where
                        continue
                    if raw in ROUTABLE or (kind in SPREAD and raw in SLASHED) or kind == "key":
                        assert status == 200, where
                    if kind not in SPREAD and any(c in expected[name] for c in "/\\"):
                        assert status == 400, where  # no plain id holds a slash
                    assert status in (200, 400), where
                    if status == 200:  # its own handler, the exact ids (never another route, never a cut)
                        assert said == {"handler": handler, "params": expected}, where
    assert checked > 300


def test_a_link_built_for_an_id_routes_back_to_it(port):
    """``links.segment`` and the router agree: the link of any id the router takes names that same id."""
    from sentinel_mcp.console.links import console_path

    values = ["alice/http-1", "alice/../../consents", "audit/x", "a\\b", "ü/文字", "a?b#c", "%2F", "a b",
              "a\u2215b", "a\uff0fb", "x/files/y"]
    for value in values:
        status, said = _send(port, "GET", console_path("sessions", value))
        assert status == 200 and said == {
            "handler": "sentinel_mcp.console.session_pages.session", "params": {"sid": value}
        }, (value, status, said)
        status, said = _send(port, "GET", console_path("agent", value))
        assert status == 400 or said == {"handler": "sentinel_mcp.console.agent_pages.run",
                                         "params": {"run": value}}, (value, status, said)
    for value in ["a\nb", "a\x07b", "alice/esc\x1b[0m", "a\x85b"]:  # a session id's control characters
        status, said = _send(port, "GET", console_path("sessions", value))
        assert status == 200 and said["params"] == {"sid": value}, (value, status, said)
    for value in [".", "..", "a\x00b"]:  # no page takes these ids: the link is refused, never another
        status, _said = _send(port, "GET", console_path("sessions", value))
        assert status == 400, value
    for value in ["a\nb", "a\x07b"]:  # a run id is no key: refused
        status, _said = _send(port, "GET", console_path("agent", value))
        assert status == 400, value


@pytest.mark.parametrize("raw", [
    "/console%2Fagent/x", "/console%2fsessions/alice%2Fx", "/console/agent%2Fx",
    "/console/sessions%2Falice%2Fx",
    "/console/inbox%2Fx", "/console/.%2e/inbox",
])
def test_an_encoded_slash_never_joins_a_fixed_segment(port, raw):
    """A fixed word of a route is a whole segment as sent: an encoded ``/`` never splits one into two."""
    for method in ("GET", "POST"):
        status, said = _send(port, method, raw)
        assert status in (400, 404, 405), (method, raw, status, said)


def test_raw_segments_are_decoded_once():
    assert quote("%2F", safe="") == "%252F"
    assert _decoded("%252F") == "%2F"


SESSION = "sentinel_mcp.console.session_pages.session"
REVOKE = "sentinel_mcp.console.session_pages.revoke"
BUILD_FILE = "sentinel_mcp.console.builds_pages.build_file"


@pytest.mark.parametrize("method, raw, handler, params", [
    ("GET", "/console/sessions/alice/http-1", SESSION, {"sid": "alice/http-1"}),
    ("GET", "/console/sessions/alice/x%2Fy/z", SESSION, {"sid": "alice/x/y/z"}),
    ("POST", "/console/sessions/alice/x/revoke", REVOKE, {"sid": "alice/x"}),
    ("POST", "/console/sessions/alice%2Fx%2Frevoke/revoke", REVOKE, {"sid": "alice/x/revoke"}),
    ("GET", "/console/builds/t-1/files/app/Main.kt", BUILD_FILE, {"task": "t-1", "path": "app/Main.kt"}),
    ("GET", "/console/builds/t-1/files/app%2FMain.kt", BUILD_FILE, {"task": "t-1", "path": "app/Main.kt"}),
    ("GET", "/console/sessions/alice/../consents", None, None),
    ("GET", "/console/sessions/alice/%2e%2E/consents", None, None),
    ("POST", "/console/sessions/alice/./revoke", None, None),
    ("GET", "/console/sessions/alice/%5C/x", None, None),
    ("GET", "/console/sessions/alice/%0A/x", SESSION, {"sid": "alice/\n/x"}),
    ("GET", "/console/sessions/alice/%00/x", None, None),
    ("GET", "/console/builds/t-1/files/app/%0A/x", None, None),
    ("GET", "/console/builds/t-1/files/app/%00/x", None, None),
    ("GET", "/console/builds/t%2F..%2Fu/files/x", None, None),
])
def test_an_id_that_may_hold_a_slash_is_the_same_id_however_its_slashes_are_sent(port, method, raw, handler,
                                                                                params):
    """A session id or a build's file path may be sent with its slashes as they are (a hand-typed address):
    every segment is then checked as an id (no dot segment, no lone slash, no control character but a session
    id's)."""
    status, said = _send(port, method, raw)
    if handler is None:
        assert status == 400, (raw, status, said)
    else:
        assert status == 200 and said == {"handler": handler, "params": params}, (raw, status, said)


@pytest.mark.parametrize("raw", ["/console/agent/a/b", "/console/inbox/x/y", "/console/activity/main.1/x"])
def test_a_plain_id_is_one_segment(port, raw):
    for method in ("GET", "POST"):
        status, said = _send(port, method, raw)
        assert status in (404, 405), (method, raw, status, said)
