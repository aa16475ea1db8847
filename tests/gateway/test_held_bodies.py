"""Request bodies the HTTP front holds are bounded per principal (``gateway/held_bodies.py``): a principal
that opens connections and sends large bodies without their last byte is refused past its share at once (429,
a JSON-RPC error), another principal is served meanwhile, and what it held is given back when its connections
end. Before, each body was bounded (4 MiB) but their number was not: 100 such connections held 360 MB.

Real gateway (share lowered to 1 MiB for the test), raw HTTP on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from sentinel_mcp.gateway.held_bodies import HeldBodies
from tests.conftest import free_port, stop_process, wait_http
from tests.gateway.helpers import TOOLBOX

pytestmark = pytest.mark.timeout(120)

ALICE, BOB = "alice-bodies-token-0123456789", "bob-bodies-token-0123456789ab"
SHARE = 1024 * 1024
PART = 400 * 1024  # of a body announced as 4 MB: three of them are past the share


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    tmp: Path = tmp_path_factory.mktemp("bodies")
    cfg = tmp / "sentinel.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
        "sentinel": {"data_dir": str(tmp / "state"), "builtins": [],
                     "principals": [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}]}}))
    p = free_port()
    env = {**os.environ, "SENTINEL_CAP_REQUEST_BYTES": str(SHARE), "SENTINEL_CAP_HTTP_BODY_SECONDS": "20"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{p}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env)
    try:
        wait_http(f"http://127.0.0.1:{p}/healthz", proc=proc, timeout=60)
        yield p
    finally:
        stop_process(proc)


def _head(port: int, token: str, length: int) -> bytes:
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: tb__echo\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


def _call(text: str) -> bytes:
    envelope = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "bodies", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}}
    params = {"name": "tb__echo", "arguments": {"text": text}, "_meta": envelope}
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode()


def _answer(sock: socket.socket) -> tuple[int, Any]:
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = sock.recv(65536)
        assert chunk, got
        got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    fields = dict(line.split(b":", 1) for line in head.split(b"\r\n")[1:])
    length = int(next(v for k, v in fields.items() if k.lower() == b"content-length"))
    while len(body) < length:
        body += sock.recv(65536)
    return int(head.split()[1]), json.loads(body[:length])


def _echo(port: int, token: str, text: str) -> tuple[int, Any]:
    body = _call(text)
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(_head(port, token, len(body)) + body)
        return _answer(sock)


def test_bodies_held_past_a_principals_share_are_refused_and_others_served(port: int) -> None:
    held: list[socket.socket] = []
    try:
        for _ in range(3):  # two of them (800 KB) within the share, the third past it
            sock = socket.create_connection(("127.0.0.1", port), timeout=15)
            sock.sendall(_head(port, ALICE, 4_000_000) + b'{"jsonrpc":"2.0","pad":"' + b"x" * PART)
            held.append(sock)
        # whichever the server read last is refused (the kernel may hand it the bodies in any order), at
        # once, not when the body's time is up; the other two wait for their last bytes
        ready, _, _ = select.select(held, [], [], 15)
        assert len(ready) == 1, ready
        status, answer = _answer(ready[0])
        assert status == 429 and "too many bytes" in answer["error"]["message"], (status, answer)
        assert select.select([s for s in held if s is not ready[0]], [], [], 0.2)[0] == []
        status, answer = _echo(port, BOB, "bob is served")
        assert status == 200 and answer["result"]["content"][0]["text"] == "bob is served"
    finally:
        for sock in held:
            sock.close()
    for _ in range(50):  # the closed connections' bytes come back as the server sees them close
        status, answer = _echo(port, ALICE, "alice again")
        if status == 200:
            break
    assert status == 200 and answer["result"]["content"][0]["text"] == "alice again"


def test_the_share_and_the_total_count_bytes_and_give_them_back() -> None:
    bodies = HeldBodies(per_principal=100, total=150)
    assert bodies.take("a", 60) is None
    assert (bodies.take("a", 41) or (0, ""))[0] == 429 and bodies.held("a") == 60  # past a's share
    assert bodies.take("b", 80) is None
    assert (bodies.take("c", 20) or (0, ""))[0] == 503 and bodies.held() == 140  # past the total
    bodies.give_back("a", 60)
    assert bodies.held("a") == 0 and bodies.held() == 80 and bodies.take("c", 20) is None
