"""What a PEM file handed to OpenSSL as trust holds, and exactly those bytes loaded into a context.

OpenSSL's ``load_verify_locations(cafile=...)`` takes every certificate *and* every CRL of a file, under any
of its labels (``TRUSTED CERTIFICATE`` too, which the ``cryptography`` reader Sentinel checks the bundle with
does not see). So each file is read once, its blocks checked against an allow list of labels (a CRL file
holds CRLs only: a certificate in it was a trust anchor, from a file that is public data often fetched over
plain HTTP), and the checked bytes, not the file read again, are what OpenSSL loads.
"""

from __future__ import annotations

import os
import re
import ssl
import tempfile

CRL_LABELS = frozenset({"X509 CRL"})
# a CA bundle: certificates as both readers see them, and the CRLs OpenSSL has always taken from it too
CA_LABELS = frozenset({"CERTIFICATE", "X509 CERTIFICATE", "X509 CRL"})

_BEGIN = re.compile(rb"-----BEGIN ([^-\r\n]*)-----")


def foreign_labels(data: bytes, allowed: frozenset[str]) -> list[str]:
    """The labels of the PEM blocks in ``data`` that ``allowed`` does not name, in order, once each."""
    found = [m.group(1).decode("latin-1").strip() for m in _BEGIN.finditer(data)]
    return list(dict.fromkeys(label for label in found if label not in allowed))


def load_trust(ctx: ssl.SSLContext, data: bytes) -> None:
    """Load ``data`` (checked PEM: certificates and CRLs) into ``ctx`` as OpenSSL loads a CA file. Written to
    a private temporary file, since only a file gives OpenSSL the CRLs; removed at once."""
    fd, name = tempfile.mkstemp(prefix="sentinel-trust-", suffix=".pem")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        ctx.load_verify_locations(cafile=name)
    finally:
        os.unlink(name)
