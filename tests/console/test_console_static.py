"""The console's static files are its own script and style, by their exact names as sent, nothing else.

Starlette's ``StaticFiles`` was mounted on the decoded path: ``/console/static%2Fconsole.css``,
``/console/%73tatic/console.css``, ``/console/static/%63onsole.css``, ``/console/static/x/../console.css``
and ``/console/static/./console.css`` all served the file (the decision made after decoding and path
normalising, under every other route's raw routing). Over real HTTP on 127.0.0.1: a real Sentinel for the
shipped files, and a console of a temporary static directory for the set known at start (a file added later,
a symlink out of the directory).
"""

from __future__ import annotations

import contextlib
import http.client
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.console.console_rig import console_config, http_sentinel

pytestmark = pytest.mark.timeout(180)

STATIC = Path(__file__).resolve().parents[2] / "sentinel_mcp" / "console" / "static"
TYPES = {"console.css": "text/css; charset=utf-8", "console.js": "text/javascript; charset=utf-8",
         "link.js": "text/javascript; charset=utf-8"}
# every spelling of a shipped file but its exact one, and of files beside or above it: none is served
HOSTILE = [
    "/console/static%2Fconsole.css", "/console/static%2fconsole.js", "/console/%73tatic/console.css",
    "/console/static/%63onsole.css", "/console/static/console%2Ecss", "/console/static/console%2ejs",
    "/console/static/./console.css", "/console/static/%2e/console.css", "/console/static/x/../console.css",
    "/console/static/x/%2e%2e/console.css", "/console/static/x%2F..%2Fconsole.css",
    "/console/static/x%5C..%5Cconsole.css", "/console/static/%252e%252e/console.css",
    "/console/static/%25%36%33onsole.css", "/console/static/%c0%ae%c0%ae/console.css",
    "/console/static/%C0%AFconsole.css", "/console/static/console.css%00",
    "/console/static/console.css%00.js",
    "/console/static/console.css;v=1", "/console/static/console.css;", "/console/static/console.css.",
    "/console/static/console.css..", "/console/static/console.css%20", "/console/static/CONSOLE.CSS",
    "/console/static/Console.css", "/console/static/console.CSS", "/console/static/console.css/",
    "/console/static//console.css", "/console/static/console.css/.", "/console/STATIC/console.css",
    "/console/static/", "/console/static", "/console/static/.", "/console/static/..",
    "/console/static/../templates/base.html", "/console/static/%2e%2e/templates/base.html",
    "/console/static/..%2Ftemplates%2Fbase.html", "/console/static/..%5Ctemplates%5Cbase.html",
    "/console/static/%2e%2e%2f%2e%2e%2fweb.py", "/console/static/..%2F..%2Fweb.py",
    "/console/static/%2e%2e%5cweb.py", "/console/static/....//web.py", "/console/static/%00",
    "/console/static/console.css%0A", "/console/static/console.css%0D%0AX-Injected:%201",
    "/console/static/console%E2%80%AEssc.css", "/console/static/console.css%EF%BC%8F",
    "/console/static/none.js", "/console/static/.hidden",
    "/console/./static/console.css", "/console//static/console.css",
]


def _send(port: int, method: str, raw_path: str) -> tuple[int, dict[str, str], bytes]:
    """``raw_path`` sent as it is (http.client neither decodes nor normalises it)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, raw_path)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def port(tmp_path_factory) -> Iterator[int]:
    cfg = console_config(tmp_path_factory.mktemp("console-static"))
    with http_sentinel(cfg) as (base, _proc):
        yield int(base.rsplit(":", 1)[1])


def _shipped() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in STATIC.iterdir()}


def _console_headers(where: Any, h: dict[str, str]) -> None:
    assert h.get("x-content-type-options") == "nosniff", (where, h)
    assert h.get("cache-control") == "no-store", (where, h)
    assert "last-modified" not in h and "etag" not in h, (where, h)  # nothing to revalidate: never stored


def test_each_shipped_file_is_served_by_its_exact_name_with_its_own_type(port):
    assert set(_shipped()) == set(TYPES)  # the list below is every file shipped
    for name, body in _shipped().items():
        status, h, got = _send(port, "GET", f"/console/static/{name}")
        assert status == 200 and got == body, (name, status)
        assert h["content-type"] == TYPES[name], (name, h)
        _console_headers(name, h)
        status, h, got = _send(port, "HEAD", f"/console/static/{name}")
        assert status == 200 and got == b"" and h["content-type"] == TYPES[name], (name, status, h)
        for method in ("POST", "PUT", "DELETE"):
            status, h, got = _send(port, method, f"/console/static/{name}")
            assert status == 405 and got not in _shipped().values(), (name, method, status)
            _console_headers((name, method), h)


@pytest.mark.parametrize("raw", HOSTILE)
def test_any_other_spelling_is_no_file(port, raw):
    shipped = set(_shipped().values())
    for method in ("GET", "HEAD"):
        status, h, body = _send(port, method, raw)
        assert status in (400, 404), (method, raw, status, body[:200])
        assert body not in shipped and b"<h1>" not in body[:0], (method, raw)
        assert b"import " not in body and b"{% " not in body, (method, raw)  # nothing above static/ either
        assert "x-injected" not in h
        if raw.startswith("/console/"):
            _console_headers((method, raw), h)


# ------------------------------------------------------- a console of its own static directory


@contextlib.contextmanager
def _serving(directory: Path) -> Iterator[int]:
    import uvicorn
    from starlette.applications import Starlette

    from sentinel_mcp.console.segment_routes import SegmentMount
    from sentinel_mcp.console.static_files import StaticRoute
    from sentinel_mcp.console.web import WithHeaders

    from starlette.middleware import Middleware

    inner = Starlette(routes=[StaticRoute("static", directory)], middleware=[Middleware(WithHeaders)])
    app = Starlette(routes=[SegmentMount("/console", app=inner)])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                           lifespan="off"))
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


def test_only_the_regular_files_there_at_start_are_served_and_no_link_is_followed(tmp_path):
    static = tmp_path / "static"
    static.mkdir()
    (static / "console.css").write_text("body{}")
    (static / "console.js").write_text("let a;")
    secret = tmp_path / "secret.js"
    secret.write_text("SECRET")
    os.symlink(secret, static / "linked.js")  # a link out of the directory, there at start
    (static / "sub").mkdir()
    (static / "sub" / "deep.js").write_text("DEEP")
    with _serving(static) as port:
        assert _send(port, "GET", "/console/static/console.css")[::2] == (200, b"body{}")
        (static / "later.js").write_text("LATER")  # added after start
        (static / "console.js").unlink()
        os.symlink(secret, static / "console.js")  # a shipped name made a link after start
        for raw in ["/console/static/linked.js", "/console/static/later.js", "/console/static/sub/deep.js",
                    "/console/static/sub", "/console/static/sub%2Fdeep.js", "/console/static/"]:
            status, h, body = _send(port, "GET", raw)
            assert status in (400, 404) and b"SECRET" not in body and b"LATER" not in body, (raw, status)
            assert b"DEEP" not in body and b"deep.js" not in body, raw  # no listing either
            _console_headers(raw, h)
        status, _h, body = _send(port, "GET", "/console/static/console.js")
        assert status == 200 and body == b"let a;", (status, body)  # what was there at start, never the link
