"""What a PEM file handed to OpenSSL as trust holds, and exactly those bytes loaded into a context.

OpenSSL's ``load_verify_locations(cafile=...)`` takes every certificate *and* every CRL of a file, under any
of its labels (``TRUSTED CERTIFICATE`` too, which the ``cryptography`` reader Sentinel checks the bundle with
does not see). So each file is read once, its blocks checked against an allow list of labels (a CRL file
holds CRLs only: a certificate in it was a trust anchor, from a file that is public data often fetched over
plain HTTP), and the checked bytes, not the file read again, are what OpenSSL loads.

The blocks of one label are paired in one pass (``blocks``): a lazy ``BEGIN.+?END`` expression scanned to the
end of the file for each BEGIN line, so a file of BEGIN lines took time in the square of its size, on the
event loop that re-reads a changed file.
"""

from __future__ import annotations

import os
import re
import ssl
import tempfile

from sentinel_mcp.core.errors import TLSError

CRL_LABELS = frozenset({"X509 CRL"})
# a CA bundle: certificates as both readers see them, and the CRLs OpenSSL has always taken from it too
CA_LABELS = frozenset({"CERTIFICATE", "X509 CERTIFICATE", "X509 CRL"})

_BEGIN = re.compile(rb"-----BEGIN ([^-\r\n]*)-----")


def foreign_labels(data: bytes, allowed: frozenset[str]) -> list[str]:
    """The labels of the PEM blocks in ``data`` that ``allowed`` does not name, in order, once each."""
    found = [m.group(1).decode("latin-1").strip() for m in _BEGIN.finditer(data)]
    return list(dict.fromkeys(label for label in found if label not in allowed))


class UnpairedBlock(TLSError, ValueError):
    """A BEGIN line without its END, or an END without its BEGIN: the file is not PEM blocks of that label."""


def blocks(data: bytes, label: str) -> list[bytes]:
    """Each ``label`` block of ``data``, BEGIN to END lines, in order; in time linear in ``data`` (every byte
    is looked at a bounded number of times). ``UnpairedBlock`` when a BEGIN has no END before the next BEGIN
    or the end, or an END has no BEGIN."""
    begin, end = f"-----BEGIN {label}-----".encode(), f"-----END {label}-----".encode()
    out: list[bytes] = []
    at = 0
    while (start := data.find(begin, at)) >= 0:
        stop = data.find(end, start + len(begin))
        following = data.find(begin, start + len(begin), stop if stop >= 0 else len(data))
        if stop < 0 or following >= 0:
            raise UnpairedBlock(f"a {begin.decode()} line without its END (at byte {start})")
        if (stray := data.find(end, at, start)) >= 0:
            raise UnpairedBlock(f"a {end.decode()} line without its BEGIN (at byte {stray})")
        at = stop + len(end)
        out.append(data[start:at])
    stray = data.find(end, at)
    if stray >= 0:
        raise UnpairedBlock(f"a {end.decode()} line without its BEGIN (at byte {stray})")
    return out


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
