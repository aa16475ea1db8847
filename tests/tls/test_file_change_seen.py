"""A changed CA or CRL file is seen whatever its size and modification time (red team "tls10").

A file was taken as unchanged while its modification time and size stayed the same. A CRL reissued with one
more revocation can keep its size (a CRL number one byte shorter, or a file padded to a block), and the tools
that fetch CRLs keep the source's time (``curl -R``, ``rsync -t``, ``cp -p``, ``wget -N``): the new
revocation was never read, and the revoked certificate went on being served, in the handshake and per
request, until something else changed. The change time and the inode are looked at too (neither can be set
back by the writer: a rename gives a new inode, any write a new change time)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sentinel_mcp.tls.peer_certificate import from_pem
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts
from tests.tls.conftest import Pki

SIZE = 8192  # both CRL files padded to this size with comment text after the block


def _padded(crl: bytes) -> bytes:
    assert len(crl) < SIZE
    return crl + b"#" * (SIZE - len(crl) - 1) + b"\n"


@pytest.mark.parametrize("how", ["in_place", "renamed_into_place"])
def test_a_new_crl_of_the_same_size_and_time_is_read(pki: Pki, tmp_path: Path, how: str) -> None:
    crl = tmp_path / "crl.pem"
    crl.write_bytes(_padded(pki.ca.crl_path.read_bytes()))
    before = os.stat(crl)
    contexts = ServerContexts(FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, crl, "optional"))
    bob = from_pem(pki.bob.cert.read_text())
    assert not contexts.is_revoked(bob)

    pki.ca.revoke("bob")  # a new CRL, bob on it
    if how == "in_place":
        with crl.open("r+b") as f:
            f.write(_padded(pki.ca.crl_path.read_bytes()))
    else:
        new = tmp_path / "crl.pem.new"
        new.write_bytes(_padded(pki.ca.crl_path.read_bytes()))
        new.replace(crl)
    os.utime(crl, ns=(before.st_atime_ns, before.st_mtime_ns))  # the fetching tool keeps the source's time
    after = os.stat(crl)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)

    contexts.reload_now()
    assert contexts.is_revoked(bob)
    assert contexts.warnings == [], contexts.warnings


def test_an_unchanged_file_is_not_read_again(pki: Pki, tmp_path: Path) -> None:
    """The stamp still says 'unchanged' for an untouched file: no rebuild at each check."""
    contexts = ServerContexts(FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path,
                                       pki.ca.crl_path, "optional"))
    first = contexts.current()
    contexts.reload_now()
    assert contexts.current() is first
