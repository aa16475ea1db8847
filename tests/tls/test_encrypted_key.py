"""An encrypted private key is refused naming the file, never waited on (red team "tls10").

Given no password, OpenSSL asks for an encrypted key's pass phrase on the controlling terminal and waits for
it. The front's files are loaded on the event loop at each change, and Sentinel's own client key at each
call to an upstream or A2A peer: a key written encrypted (a renewal with ``-aes256``) stopped the whole
gateway at ``Enter PEM pass phrase:`` until someone typed at its terminal. Each case runs in a Python process
whose controlling terminal is a pseudo-terminal this test reads: what it shows first, a prompt or the
process's answer, is the result (an order of events, no time limit)."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from tests.tls.conftest import Pki

pytestmark = pytest.mark.timeout(120)
PROMPT = b"Enter PEM pass phrase"  # OpenSSL's question on the terminal

FRONT = """
from pathlib import Path
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts, TLSSetupError, build_server_context
cert, key, plain = Path({cert!r}), Path({key!r}), Path({plain!r})
try:
    build_server_context(FrontTLS(cert, key))
    print("ANSWER loaded", flush=True)
except TLSSetupError as e:
    print("ANSWER refused:", e, flush=True)
contexts = ServerContexts(FrontTLS(cert, plain))  # serving; then the key is replaced by the encrypted one
plain.write_bytes(key.read_bytes())
contexts.reload_now()
print("ANSWER reload:", contexts.warnings, flush=True)
"""

CLIENT = """
from sentinel_mcp.tls.client_context import client_context
from sentinel_mcp.tls.server_context import TLSSetupError
from sentinel_mcp.tls.settings import ClientTLS
try:
    client_context(ClientTLS(cert={cert!r}, key={key!r}))
    print("ANSWER loaded", flush=True)
except TLSSetupError as e:
    print("ANSWER refused:", e, flush=True)
"""


def _encrypted(pki: Pki, tmp_path: Path) -> Path:
    key = serialization.load_pem_private_key(pki.server.key.read_bytes(), None)
    path = tmp_path / "encrypted.key"
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.BestAvailableEncryption(b"correct horse")))
    path.chmod(0o600)
    return path


def _on_a_terminal(code: str) -> str:
    """What a Python process running ``code`` shows on its controlling terminal, up to its first prompt for
    a pass phrase or to its end."""
    leader, follower = pty.openpty()

    def own_terminal() -> None:  # the child's controlling terminal: what OpenSSL opens as /dev/tty
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen([sys.executable, "-c", code], stdin=follower, stdout=follower, stderr=follower,
                            preexec_fn=own_terminal, env={**os.environ, "PYTHONPATH": os.getcwd()})
    os.close(follower)
    shown = b""
    try:
        while PROMPT not in shown:
            ready, _, _ = select.select([leader], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the child ended: its terminal is gone
                break
            if not chunk:
                break
            shown += chunk
    finally:
        proc.kill()
        proc.wait()
        os.close(leader)
    return shown.decode(errors="replace")


def test_the_front_refuses_an_encrypted_key_at_start_and_on_reload(pki: Pki, tmp_path: Path) -> None:
    encrypted = _encrypted(pki, tmp_path)
    plain = tmp_path / "plain.key"
    plain.write_bytes(pki.server.key.read_bytes())
    plain.chmod(0o600)
    shown = _on_a_terminal(FRONT.format(cert=str(pki.server.cert), key=str(encrypted), plain=str(plain)))
    assert PROMPT.decode() not in shown, shown
    assert f"ANSWER refused: TLS key refused: the key {encrypted} is encrypted" in shown, shown
    # on a reload the previous files keep serving, and the reason is shown
    assert "ANSWER reload: ['TLS files changed but cannot be used" in shown, shown
    assert "is encrypted, and no pass phrase is asked for" in shown.split("ANSWER reload:")[1], shown


def test_a_client_certificate_s_encrypted_key_is_refused(pki: Pki, tmp_path: Path) -> None:
    encrypted = _encrypted(pki, tmp_path)
    shown = _on_a_terminal(CLIENT.format(cert=str(pki.server.cert), key=str(encrypted)))
    assert PROMPT.decode() not in shown, shown
    assert f"ANSWER refused: client key refused: the key {encrypted} is encrypted" in shown, shown


def test_an_unencrypted_key_still_loads(pki: Pki) -> None:
    shown = _on_a_terminal(CLIENT.format(cert=str(pki.alice.cert), key=str(pki.alice.key)))
    assert "ANSWER loaded" in shown, shown
