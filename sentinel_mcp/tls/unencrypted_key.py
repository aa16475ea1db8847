"""A certificate's private key is loaded as it is on disk, never by asking for a pass phrase.

Given no password, OpenSSL asks for an encrypted key's pass phrase on the controlling terminal and waits.
The files are loaded on the event loop (the front's at each change, Sentinel's own client key at each call to
an upstream or peer): one key written encrypted, under a terminal, stopped every connection of the gateway
until someone typed at it. So the question is answered with a refusal that names the file."""

from __future__ import annotations

import ssl

from sentinel_mcp.core.errors import TLSError


class EncryptedKey(TLSError, ValueError):
    """The key file is encrypted: Sentinel reads an unencrypted key (owner-only), asking no pass phrase."""


def load_chain(ctx: ssl.SSLContext, cert: str, key: str | None) -> None:
    """``ctx.load_cert_chain(cert, key)``, with ``EncryptedKey`` naming the file when the key is encrypted."""
    where = key or cert

    def refuse() -> bytes:
        raise EncryptedKey(
            f"the key {where} is encrypted, and no pass phrase is asked for; write it unencrypted and "
            "owner-only (`openssl pkey -in KEY -out PLAIN`, then chmod 600)"
        )

    ctx.load_cert_chain(cert, key, password=refuse)
