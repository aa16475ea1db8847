"""``call --url`` and ``chat --url`` keep plaintext on loopback, as the front and the upstreams do (red team
"tls10").

``call --url http://HOST:8765/mcp`` sent its bearer token (the owner's, read from the data dir by itself
when none is given) to any host in the clear: the front refuses plaintext beyond loopback and an upstream
``http://`` URL beyond loopback is a config error, but the command-line clients connected anywhere. Now an
``http://`` URL whose host is not loopback (by the one reading of ``core/untrusted_address.py``: ``127.1`` is
not) is refused before anything connects, unless ``--plaintext`` says so knowingly. A real listener counts
what reached it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sentinel_mcp.tls.authority import machine_addresses
from tests.identity.identity_rig import write_config

pytestmark = pytest.mark.timeout(240)

TOKEN = "tok-" + "s3cret" * 6


def _lan_address() -> str | None:
    return next((a for a in machine_addresses() if "." in a and not a.startswith("127.")), None)


class _Listener:
    """A TCP listener that records what each connection sends first, then closes it (so a client that
    connected fails at once instead of waiting for an answer)."""

    def __init__(self, host: str) -> None:
        self.sock = socket.socket()
        self.sock.bind((host, 0))
        self.sock.listen(8)
        self.host = host
        self.port = self.sock.getsockname()[1]
        self.heard = b""
        self._wake: tuple[str, int] | None = None
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, peer = self.sock.accept()
            except OSError:  # closed
                return
            if peer == self._wake:  # close()'s own connection: every one queued before it was read
                conn.close()
                return
            conn.settimeout(10)
            try:
                self.heard += conn.recv(65536)
            except OSError:
                pass
            conn.close()

    def close(self) -> None:
        # Closing a socket does not wake a thread blocked in accept() on Linux (each close waited out the
        # join's 10 s). A connection of our own, from an address noted first, wakes it; the backlog is
        # first in first out, so a client's connection that arrived before it is still read and counted.
        if self._wake is None and self._thread.is_alive():
            with socket.socket() as wake:
                wake.bind((self.host, 0))
                self._wake = wake.getsockname()
                wake.connect((self.host, self.port))  # queued even once closed: accept() still returns it
        self._thread.join(10)
        self.sock.close()


def _cli(cfg: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), *args], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, "SENTINEL_DATA_DIR": str(cfg.parent / "state")})


def _targets() -> list[str]:
    lan = _lan_address()
    return ["127.1", *([lan] if lan else [])]


@pytest.mark.parametrize("host", _targets())
@pytest.mark.parametrize("command", ["call", "chat"])
def test_plaintext_beyond_loopback_is_refused_before_anything_connects(tmp_path: Path, host: str,
                                                                     command: str) -> None:
    cfg = write_config(tmp_path)
    sock = _Listener("127.0.0.1" if host == "127.1" else host)
    url = f"http://{host}:{sock.port}/mcp"
    try:
        args = ["call", "bookings__list", "{}"] if command == "call" else ["chat"]
        done = _cli(cfg, *args, "--url", url, "--token", TOKEN)
        assert done.returncode != 0
        assert "plaintext beyond loopback" in done.stderr, done.stderr
        sock.close()
        assert sock.heard == b""
    finally:
        sock.close()


def test_the_owner_s_token_read_by_itself_goes_nowhere_in_the_clear(tmp_path: Path) -> None:
    cfg = write_config(tmp_path)
    host = _targets()[-1]
    sock = _Listener("127.0.0.1" if host == "127.1" else host)
    try:
        done = _cli(cfg, "call", "bookings__list", "{}", "--url", f"http://{host}:{sock.port}/mcp")
        assert "plaintext beyond loopback" in done.stderr, done.stderr
        sock.close()
        assert sock.heard == b""
    finally:
        sock.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "plaintext"])
def test_loopback_and_a_knowing_plaintext_still_connect(tmp_path: Path, host: str) -> None:
    cfg = write_config(tmp_path)
    target = _lan_address() if host == "plaintext" else host
    if target is None:
        pytest.skip("no address beyond loopback on this machine")
    sock = _Listener("127.0.0.1" if host == "localhost" else target)
    more = ["--plaintext"] if host == "plaintext" else []
    try:
        _cli(cfg, "call", "bookings__list", "{}", "--url", f"http://{target}:{sock.port}/mcp",
             "--token", TOKEN, *more)
        sock.close()
        assert f"Bearer {TOKEN}".encode() in sock.heard  # it connected and sent its request
    finally:
        sock.close()
