"""A WebSocket upgrade the front refuses is answered with a body that says why (red team "rt-limits7").

Before, an upgrade on ``/mcp`` (or any path but the A2A binding's, or one refused for its Host, Origin, a
repeated header or a missing token) got uvicorn's bare ``403`` with no body: the client was told nothing it
could read, while the same refusal over plain HTTP is a JSON-RPC error on a door and ``{"error": ...}``
elsewhere. Now every upgrade refused before it is accepted is an HTTP answer with a body in the same shape
as the plain-HTTP refusal at that path (JSON-RPC on a door), at the refusal's own status."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import free_port, stop_process, wait_http
from tests.gateway.helpers import TOOLBOX
from tests.gateway.test_lean_calls import TOKEN

pytestmark = pytest.mark.timeout(240)
KEY = "dGhlIHNhbXBsZSBub25jZQ=="


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp: Path = tmp_path_factory.mktemp("upgrade-refusals")
    cfg = tmp / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
                               "sentinel": {"data_dir": str(tmp / "state"), "http": {"token": TOKEN}}}))
    number = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{number}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{number}/healthz", proc=proc)
        yield number
    finally:
        stop_process(proc)


def upgrade(port: int, path: str, *extra: str, token: bool = True, host: str | None = None
            ) -> tuple[int, bytes, bytes]:
    """One raw upgrade request: the answer's status and body (read to its Content-Length or the close)."""
    lines = [f"GET {path} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}", "Upgrade: websocket",
             "Connection: Upgrade", f"Sec-WebSocket-Key: {KEY}", "Sec-WebSocket-Version: 13",
             *([f"Authorization: Bearer {TOKEN}"] if token else []), *extra]
    sock = socket.create_connection(("127.0.0.1", port), timeout=15)
    got = b""
    try:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        while True:
            head, sep, body = got.partition(b"\r\n\r\n")
            if sep:
                length = [int(v) for k, _, v in (h.partition(b":") for h in head.split(b"\r\n")[1:])
                          if k.strip().lower() == b"content-length"]
                if length and len(body) >= length[0]:
                    break
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    finally:
        sock.close()
    head, _, body = got.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
    return status, body, head.lower()


DOORS = ("/mcp", "/a2a", "/messages/?session_id=0123456789abcdef0123456789abcdef", "/sse")
ELSEWHERE = ("/mcp/", "/healthz", "/nowhere", "/console/x", "/.well-known/agent-card.json")


def cases(port: int) -> dict[str, tuple[str, list[str], bool, str | None]]:
    """Every way an upgrade is refused before it is accepted, at every kind of path."""
    found: dict[str, tuple[str, list[str], bool, str | None]] = {}
    for path in (*DOORS, *ELSEWHERE):
        found[f"{path}: no such socket"] = (path, [], True, None)
        found[f"{path}: no token"] = (path, [], False, None)
        found[f"{path}: other origin"] = (path, ["Origin: http://evil.example"], True, None)
        found[f"{path}: other host"] = (path, [], True, "evil.example")
        found[f"{path}: repeated header"] = (path, ["Authorization: Bearer x"], True, None)
    return found


def test_every_refused_upgrade_says_why_in_the_shape_of_its_path(port: int) -> None:
    checked = empty = 0
    for what, (path, extra, token, host) in cases(port).items():
        status, body, _ = upgrade(port, path, *extra, token=token, host=host)
        assert 400 <= status < 500, (what, status, body)
        checked += 1
        if not body:
            empty += 1
            continue
        answer = json.loads(body)
        if path in DOORS:  # a door's client reads JSON-RPC
            assert set(answer) == {"jsonrpc", "id", "error"}, (what, answer)
            assert type(answer["error"]["code"]) is int and answer["error"]["message"], (what, answer)
        else:
            assert isinstance(answer.get("error"), str) and answer["error"], (what, answer)
    assert checked == len(cases(port)) == 45
    assert empty == 0, f"{empty} of {checked} refused upgrades had no body"


def test_a_missing_token_keeps_its_challenge_and_status(port: int) -> None:
    status, body, head = upgrade(port, "/a2a/ws", token=False)
    assert status == 401 and b"www-authenticate: bearer" in head, (status, head)
    assert "token" in json.loads(body)["error"].lower(), body


def test_an_http_route_takes_no_upgrade_and_its_app_never_sees_one(port: int) -> None:
    """/messages/ handed the socket to its HTTP app, which failed on it (a fault, logged, a bare 403)."""
    for path in (*DOORS, "/mcp/", "/healthz"):
        status, body, _ = upgrade(port, path)
        assert status == 404 and "websocket" in body.decode().lower(), (path, status, body)


def plain(port: int, method: str, path: str, *extra: str, token: bool = True, host: str | None = None,
          body: bytes = b"") -> tuple[int, bytes]:
    """One plain request: its status and, for a refusal, its body (an answer taken is not read on: a GET
    may open a stream)."""
    auth = [f"Authorization: Bearer {TOKEN}"] if token else []
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}", "Connection: close",
             "Accept: application/json, text/event-stream", *auth, *extra]
    if body or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(body)}")
    sock = socket.create_connection(("127.0.0.1", port), timeout=15)
    got = b""
    try:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        while True:
            head, sep, rest = got.partition(b"\r\n\r\n")
            if sep:
                status = int(head.split(b" ", 2)[1])
                length = [int(v) for k, _, v in (h.partition(b":") for h in head.split(b"\r\n")[1:])
                          if k.strip().lower() == b"content-length"]
                if status < 400 or (length and len(rest) >= length[0]):
                    break
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    finally:
        sock.close()
    head, _, rest = got.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
    return status, rest


def test_every_refusal_at_a_door_over_plain_http_has_a_body(port: int) -> None:
    """The same refusals as plain requests, every method at every door: each a status of 400 or more with a
    JSON body (a JSON-RPC error object) saying why."""
    checked = 0
    bad: list[tuple[str, int, bytes]] = []
    for path in DOORS:
        for method in ("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
            variants: dict[str, dict[str, Any]] = {
                "no token": dict(token=False), "other origin": dict(extra=["Origin: http://evil.example"]),
                "other host": dict(host="evil.example"),
                "repeated header": dict(extra=["Authorization: Bearer x"]),
                "broken json": dict(extra=["Content-Type: application/json"],
                                    body=b'{"jsonrpc": "2.0", "id": 1,'),
                "not json": dict(extra=["Content-Type: text/plain"], body=b"hello"),
            }
            for what, kw in variants.items():
                status, body = plain(port, method, path, *kw.get("extra", []), token=kw.get("token", True),
                                     host=kw.get("host"), body=kw.get("body", b""))
                if status < 400:
                    continue  # taken (a GET that opens a stream, a DELETE of no session...): not a refusal
                checked += 1
                try:
                    answer = json.loads(body)
                except ValueError:
                    answer = None
                if not (isinstance(answer, dict) and isinstance(answer.get("error"), dict)
                        and answer["error"].get("message")):
                    bad.append((f"{method} {path}: {what}", status, body[:200]))
    assert checked >= 100, checked
    assert not bad, bad
