"""The CRLs' "never back in time" mark outlives a restart (red team "rt-wire5"). It was kept in memory only:
an older CRL handed back while the gateway was down (signed, within its nextUpdate, lacking the revocations
made since) was taken as it was at the next start, and a certificate revoked since was admitted again. Now
the mark is kept in the data dir (owner-only, written atomically): such a start is refused, naming the file
and the way out; a missing mark is said in the log and the files taken as they are; a corrupt or foreign one
refuses the start; one that cannot be written is said in the log and in /healthz's problems."""

from __future__ import annotations

import json
import logging
import os
import ssl
import stat
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from sentinel_mcp.tls.crl_mark import MARK_FILE, CrlMark
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts, TLSSetupError
from tests.conftest import free_port
from tests.tls.conftest import Pki
from tests.tls.tls_rig import client_context, https_sentinel, tls_config

pytestmark = pytest.mark.timeout(240)


async def _who(base: str, pki: Pki, issued: object) -> str:
    """The answer to a request with ``issued``'s certificate ("refused" when the handshake or the caller
    check refuses it)."""
    try:
        verify = client_context(pki, issued)  # type: ignore[arg-type]
        async with httpx2.AsyncClient(verify=verify, timeout=30) as http:
            r = await http.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                headers={"accept": "application/json, text/event-stream"})
    except (httpx2.HTTPError, ssl.SSLError):
        return "refused"
    return "refused" if r.status_code == 401 else "served"


def _start_refused(cfg: Path) -> str:
    """Serving ``cfg`` ends at once with an error; its stderr."""
    proc = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"0.0.0.0:{free_port()}"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "SENTINEL_DATA_DIR": str(cfg.parent / "state")})
    assert proc.returncode != 0, proc.stderr[-2000:]
    return proc.stderr


async def test_an_older_crl_put_back_while_down_is_refused_after_a_restart(tmp_path: Path, pki: Pki) -> None:
    replayed = pki.ca.crl_path.read_bytes()  # signed, valid, older: it does not revoke bob
    pki.ca.revoke("bob")
    cfg = tls_config(tmp_path, pki, mode="optional")
    mark = tmp_path / "state" / "tls" / MARK_FILE
    with https_sentinel(cfg, pki) as (base, _):
        assert await _who(base, pki, pki.alice) == "served"
        assert await _who(base, pki, pki.bob) == "refused"
    assert stat.S_IMODE(mark.stat().st_mode) == 0o600  # the gateway's own
    assert not [p for p in mark.parent.iterdir() if p.name.startswith(".crl-mark.")]  # no temporary left

    pki.ca.crl_path.write_bytes(replayed)  # handed back while the gateway is down
    said = _start_refused(cfg)
    assert "older" in said and str(mark) in said and "Traceback" not in said, said[-2000:]

    pki.ca.revoke("carol")  # the operator writes a current CRL: it starts, and bob stays revoked
    with https_sentinel(cfg, pki) as (base, proc):
        assert await _who(base, pki, pki.alice) == "served"
        for revoked in (pki.bob, pki.carol):
            assert await _who(base, pki, revoked) == "refused"
        pki.ca.crl_path.write_bytes(replayed)  # and while it runs, as before
        await _reload_seen(base, pki)
        assert await _who(base, pki, pki.bob) == "refused"
    mark.unlink()  # removed: the files are taken as they are (the operator's way out), and it says so
    with https_sentinel(cfg, pki) as (base, proc):
        assert await _who(base, pki, pki.bob) == "served"
    assert mark.exists()


async def _reload_seen(base: str, pki: Pki) -> None:
    import asyncio

    await asyncio.sleep(1.1)  # the front looks at its files at most once a second
    await _who(base, pki, pki.alice)


def _tls(pki: Pki) -> FrontTLS:
    return FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, pki.ca.crl_path, "optional")


@pytest.mark.parametrize("content", [
    b"", b"{", b"\xff\xfe", b"[]", b"null", b'{"version": 1}', b'{"version": 2, "cas": {}}',
    b'{"version": true, "cas": {}}', b'{"version": 1, "cas": {}, "more": 1}',
    b'{"version": 1, "cas": {"abc": [1, 2.0, null]}}',
    b'{"version": 1, "cas": {"' + b"a" * 64 + b'": [true, 2.0, null]}}',
    b'{"version": 1, "cas": {"' + b"a" * 64 + b'": [1, NaN, null]}}',
    b'{"version": 1, "cas": {"' + b"a" * 64 + b'": [1, 2.0]}}',
    b'{"version": 1, "cas": {"' + b"a" * 64 + b'": [1, 2.0, "soon"]}}',
    b'{"version": 1, "cas": {"' + b"a" * 64 + b'": [' + b"9" * 60 + b', 2.0, null]}}',
    b'{"version": 1, "cas": {"' + b"A" * 64 + b'": [1, 2.0, null]}}',
    b" " * (2 << 20),
])
def test_a_mark_that_is_not_one_refuses_the_start(tmp_path: Path, pki: Pki, content: bytes) -> None:
    path = tmp_path / MARK_FILE
    path.write_bytes(content)
    with pytest.raises(TLSSetupError, match="Remove it to take the CRL files as they are") as e:
        ServerContexts(_tls(pki), CrlMark(path))
    assert str(path) in str(e.value)
    assert path.read_bytes() == content  # left for the operator to look at


def test_a_mark_another_account_may_change_refuses_the_start(tmp_path: Path, pki: Pki) -> None:
    path = tmp_path / MARK_FILE
    ServerContexts(_tls(pki), CrlMark(path))
    path.chmod(0o666)
    with pytest.raises(TLSSetupError, match="another account"):
        ServerContexts(_tls(pki), CrlMark(path))


def test_a_missing_mark_is_said_and_made(tmp_path: Path, pki: Pki, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "tls" / MARK_FILE
    with caplog.at_level(logging.WARNING):
        contexts = ServerContexts(_tls(pki), CrlMark(path))
    assert any("no CRL mark" in r.getMessage() and str(path) in r.getMessage() for r in caplog.records)
    doc = json.loads(path.read_text())
    assert doc["version"] == 1 and len(doc["cas"]) == 1 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not contexts.warnings or not any("mark" in w for w in contexts.warnings)
    # a newer CRL taken while running moves the mark forward; the one before is then refused at a start
    before = pki.ca.crl_path.read_bytes()
    pki.ca.revoke("bob")
    contexts.reload_now()
    (number,) = [stamp[0] for stamp in json.loads(path.read_text())["cas"].values()]
    assert number > next(iter(doc["cas"].values()))[0]
    pki.ca.crl_path.write_bytes(before)
    with pytest.raises(TLSSetupError, match="older"):
        ServerContexts(_tls(pki), CrlMark(path))


def test_a_mark_that_cannot_be_written_is_said(pki: Pki, caplog: pytest.LogCaptureFixture) -> None:
    """(/proc takes no new file, even from root.) The CRL in force is served; the problem is in the log and
    in the warnings /healthz lists."""
    with caplog.at_level(logging.ERROR):
        contexts = ServerContexts(_tls(pki), CrlMark(Path("/proc") / MARK_FILE))
    assert any("cannot be written" in w for w in contexts.warnings), contexts.warnings
    assert any("cannot be written" in r.getMessage() for r in caplog.records)


def test_without_client_certificates_no_mark_is_read_or_made(tmp_path: Path, pki: Pki) -> None:
    path = tmp_path / MARK_FILE
    path.write_bytes(b"{")  # not read: nothing it holds bears on a front that asks for no certificate
    ServerContexts(FrontTLS(pki.server.cert, pki.server.key), CrlMark(path))
    ServerContexts(FrontTLS(pki.server.cert, pki.server.key), CrlMark(tmp_path / "other.json"))
    assert not (tmp_path / "other.json").exists()


def test_the_process_refusal_is_clear(tmp_path: Path, pki: Pki) -> None:
    """A corrupt mark at start: one clear line, no traceback."""
    cfg = tls_config(tmp_path, pki, mode="optional")
    mark = tmp_path / "state" / "tls" / MARK_FILE
    mark.parent.mkdir(parents=True)
    mark.write_bytes(b"{not json")
    said = _start_refused(cfg)
    assert "is not a CRL mark" in said and str(mark) in said and "Traceback" not in said, said[-2000:]

