"""Canary sweep (secret values never leave): no byte of a TLS key file is ever in an error, a warning or a log
line, whatever the file holds. The front's key, Sentinel's own client key and a key replaced while serving are
each loaded from files that cannot be used: a key cut short, another certificate's key, a PEM block of
garbage, plain text, a key with a trailing line, and the certificate and key swapped. Each text shown names
the file, never its contents."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from sentinel_mcp.tls.client_context import client_context
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts, TLSSetupError, build_server_context
from sentinel_mcp.tls.settings import ClientTLS
from tests.tls.conftest import Pki

pytestmark = pytest.mark.timeout(120)
CANARY = "SNTLKEYCANARY7f3a9c"


def _bad_keys(pki: Pki) -> dict[str, bytes]:
    key = pki.server.key.read_bytes()
    return {
        "cut short": key[: len(key) * 2 // 3],
        "another certificate's key": pki.bob.key.read_bytes(),
        "garbage block": f"-----BEGIN PRIVATE KEY-----\n{CANARY * 2}\n-----END PRIVATE KEY-----\n".encode(),
        "plain text": f"password={CANARY}\n".encode(),
        "trailing line": key + f"{CANARY}\n".encode(),
        "bad base64 inside": key.replace(key.splitlines()[2], CANARY.encode() * 3),
    }


def _secret_pieces(data: bytes) -> list[str]:
    """What must never be shown: the canary and every line of the key's body (base64 of the key itself)."""
    lines = [ln for ln in data.decode("latin-1").splitlines() if ln and not ln.startswith("-----")]
    return [CANARY] + [ln for ln in lines if len(ln) >= 16]


def _shown(texts: list[str], data: bytes) -> list[str]:
    return [p for p in _secret_pieces(data) if any(p in t for t in texts)]


@pytest.mark.parametrize("case", ["cut short", "another certificate's key", "garbage block", "plain text",
                                  "trailing line", "bad base64 inside"])
def test_a_key_file_that_cannot_be_used_is_named_never_quoted(pki: Pki, tmp_path: Path, case: str,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    data = _bad_keys(pki)[case]
    bad = tmp_path / "bad.key"
    bad.write_bytes(data)
    bad.chmod(0o600)
    texts: list[str] = []
    for load in (lambda: build_server_context(FrontTLS(pki.server.cert, bad)),
                 lambda: client_context(ClientTLS(cert=str(pki.alice.cert), key=str(bad)))):
        try:
            load()
            texts.append("loaded")
        except (TLSSetupError, ValueError) as e:
            texts += [str(e), repr(e), str(e.__cause__ or ""), str(e.__context__ or "")]
    # serving with the right key, then the file is replaced by the bad one: the reload's warnings and logs
    served = tmp_path / "served.key"
    served.write_bytes(pki.server.key.read_bytes())
    served.chmod(0o600)
    contexts = ServerContexts(FrontTLS(pki.server.cert, served))
    served.write_bytes(data)
    contexts.reload_now()
    texts += list(contexts.warnings)
    texts += [r.getMessage() for r in caplog.records]
    texts += [str(r.exc_info) for r in caplog.records if r.exc_info]
    if case != "trailing line":  # (OpenSSL reads the key and leaves what follows its block: a usable file)
        assert "loaded" not in texts, texts
        assert any(str(bad) in t for t in texts) and any(str(served) in t for t in texts), texts  # named
    assert _shown(texts, data) == [], texts


def test_the_certificate_and_key_swapped_name_the_files_only(pki: Pki) -> None:
    key = pki.server.key.read_bytes()
    with pytest.raises(TLSSetupError) as e:
        build_server_context(FrontTLS(pki.server.key, pki.server.cert))
    assert _shown([str(e.value)], key) == [] and str(pki.server.key) in str(e.value)
