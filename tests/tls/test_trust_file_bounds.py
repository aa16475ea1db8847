"""The front's CA bundle and CRL file are read in bounded time and size (red team "tls10").

The CRL blocks of both files were found with a lazy regular expression (``BEGIN.+?END``): for each BEGIN line
it scanned to the end of the file looking for an END, so a file of BEGIN lines took time in the square of its
size (200 KB: 6 s of CPU, 1 MB: minutes), on the event loop, where the files are re-read when they change:
the whole gateway stopped answering. A CRL is public data, often fetched over plain HTTP by a cron job, so
whoever sits on that path chose those bytes. Now the blocks are paired in one pass (a BEGIN without its END,
or an END without its BEGIN, refuses the file naming it), and a file past ``MAX_TRUST_FILE_BYTES`` is refused
before it is read whole."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import pytest

from sentinel_mcp.tls import server_context
from sentinel_mcp.tls.peer_certificate import from_pem
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts, TLSSetupError, build_server_context
from tests.tls.conftest import Pki

pytestmark = pytest.mark.timeout(300)

BEGIN = b"-----BEGIN X509 CRL-----\n"
END = b"-----END X509 CRL-----\n"


def _cpu(run: Callable[[], object]) -> float:
    """The least CPU of three runs of ``run`` (this thread's: other work on the machine does not count)."""
    best = float("inf")
    for _ in range(3):
        start = time.thread_time()
        try:
            run()
        except TLSSetupError:
            pass
        best = min(best, time.thread_time() - start)
    return best


@pytest.mark.parametrize("where", ["crl", "ca"])
def test_begin_lines_without_end_cost_time_in_proportion_to_the_file(pki: Pki, tmp_path: Path, where: str
                                                                     ) -> None:
    """Eight times the BEGIN lines cost at most eight times the work, not sixty-four times (a ratio of two
    runs in this test, never a time limit: before, 2.2 s against 0.035 s); the file is refused all the
    same."""
    real_crl = pki.ca.crl_path.read_bytes()

    def front(lines: int) -> FrontTLS:
        hostile = tmp_path / f"{where}-{lines}.pem"
        if where == "crl":
            hostile.write_bytes(real_crl + BEGIN * lines)
            return FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, hostile, "optional")
        hostile.write_bytes(pki.ca.ca_cert_path.read_bytes() + real_crl + BEGIN * lines)
        return FrontTLS(pki.server.cert, pki.server.key, hostile, None, "optional")

    small, large = front(600), front(4800)
    # (both runs load the same certificate and key, and check the same CRL signature: their cost is in both)
    small_cpu = _cpu(lambda: build_server_context(small))
    large_cpu = _cpu(lambda: build_server_context(large))
    assert large_cpu / small_cpu < 8, (small_cpu, large_cpu)
    with pytest.raises(TLSSetupError, match="without its END"):
        build_server_context(large)


@pytest.mark.parametrize(
    "tail, why",
    [
        (BEGIN, "without its END"),  # a BEGIN left open (a download cut short)
        (END, "without its BEGIN"),  # an END nobody opened
        (BEGIN + b"AAAA\n" + BEGIN + b"AAAA\n" + END, "without its END"),  # a BEGIN inside a block
    ],
)
def test_an_unpaired_crl_line_refuses_the_file_naming_it(pki: Pki, tmp_path: Path, tail: bytes, why: str
                                                         ) -> None:
    crl = tmp_path / "crl.pem"
    crl.write_bytes(pki.ca.crl_path.read_bytes() + tail)
    with pytest.raises(TLSSetupError, match=why) as refused:
        build_server_context(FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, crl, "optional"))
    assert str(crl) in str(refused.value)


def test_an_unpaired_crl_line_in_a_changed_file_keeps_the_crl_in_force(pki: Pki, tmp_path: Path) -> None:
    crl = tmp_path / "crl.pem"
    crl.write_bytes(pki.ca.crl_path.read_bytes())
    contexts = ServerContexts(FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, crl, "optional"))
    revoked = from_pem(pki.revoked.cert.read_text())
    assert contexts.is_revoked(revoked)
    crl.write_bytes(pki.ca.crl_path.read_bytes() + BEGIN * 50)
    contexts.reload_now()
    assert "without its END" in contexts.warnings[0]
    assert contexts.is_revoked(revoked)  # the CRL in force still counts


def test_crlf_lines_and_text_between_blocks_still_load(pki: Pki, tmp_path: Path) -> None:
    """What OpenSSL has always taken: CRLF line ends, comments between blocks, two CRLs in one file."""
    pki.ca.revoke("bob")
    first = pki.ca.crl_path.read_bytes()
    crl = tmp_path / "crl.pem"
    crlf = first.replace(b"\n", b"\r\n")
    crl.write_bytes(b"# fetched from the CA\r\n" + crlf + b"\r\nsome text\r\n" + first)
    contexts = ServerContexts(FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, crl, "optional"))
    for who in (pki.revoked, pki.bob):
        assert contexts.is_revoked(from_pem(who.cert.read_text()))
    assert not contexts.is_revoked(from_pem(pki.alice.cert.read_text()))


@pytest.mark.parametrize("which", ["ca", "crl"])
def test_a_trust_file_past_the_bound_is_refused_naming_it(pki: Pki, tmp_path: Path, which: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_context, "MAX_TRUST_FILE_BYTES", 64 * 1024)
    big = tmp_path / f"{which}.pem"
    source = pki.ca.ca_cert_path if which == "ca" else pki.ca.crl_path
    # the real blocks first, then text past the bound (OpenSSL would have read it all)
    big.write_bytes(source.read_bytes() + b"# padding\n" * 8000)
    ca, crl = (big, pki.ca.crl_path) if which == "ca" else (pki.ca.ca_cert_path, big)
    with pytest.raises(TLSSetupError, match="larger than 65536 bytes") as refused:
        build_server_context(FrontTLS(pki.server.cert, pki.server.key, ca, crl, "optional"))
    assert str(big) in str(refused.value)
    # within the bound the same files load
    big.write_bytes(source.read_bytes() + b"# padding\n" * 100)
    build_server_context(FrontTLS(pki.server.cert, pki.server.key, ca, crl, "optional"))
