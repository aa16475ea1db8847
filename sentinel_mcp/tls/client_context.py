"""Sentinel as a TLS client (upstream MCP servers, A2A peers): the server is verified against the system's
store
or a configured CA, its name checked, its certificate optionally pinned by SHA-256 fingerprint, and Sentinel
can present its own client certificate.

A pin is checked inside the handshake (a custom ``SSLObject``, public ``SSLContext.sslobject_class`` API), so
a
server with the wrong certificate never receives a byte of the request: no header, no token.
"""

from __future__ import annotations

import hashlib
import hmac
import ssl
from pathlib import Path
from typing import Any

from sentinel_mcp.tls.file_modes import not_a_file, replaceable_by_others
from sentinel_mcp.tls.setup_error import TLSSetupError
from sentinel_mcp.tls.settings import ClientTLS
from sentinel_mcp.tls.unencrypted_key import EncryptedKey, load_chain
from sentinel_mcp.core.errors import TLSError


class PinMismatch(TLSError, ssl.SSLCertVerificationError):
    pass


def _pinned_class(pins: frozenset[str]) -> type[ssl.SSLObject]:
    class PinnedSSLObject(ssl.SSLObject):
        def do_handshake(self) -> None:
            super().do_handshake()
            der = self.getpeercert(binary_form=True) or b""
            seen = hashlib.sha256(der).hexdigest()
            if not any(hmac.compare_digest(seen, p) for p in pins):
                raise PinMismatch(
                    1,
                    f"certificate pin mismatch: the server presented sha256 {seen}, which is not "
                    "among the configured pin_sha256",
                )

    return PinnedSSLObject


def client_context(tls: ClientTLS | None) -> ssl.SSLContext | None:
    """The context for one server (None: no settings, use the HTTP client's defaults: the system's store).
    Raises TLSSetupError naming the file when a CA, certificate or key cannot be loaded."""
    if tls is None:
        return None
    # as the front's files (file_modes.py): whoever may change ``ca`` answers for the server (and reads every
    # call, the headers' tokens too); whoever may change ``cert`` and ``key`` chooses who Sentinel is
    for what, name in (("CA", tls.ca), ("client certificate", tls.cert), ("client key", tls.key)):
        why = (not_a_file(Path(name)) or replaceable_by_others(Path(name))) if name else None
        if why is not None:
            raise TLSSetupError(f"{what} file refused: {why}")
    try:
        ctx = ssl.create_default_context(cafile=tls.ca) if tls.ca else ssl.create_default_context()
    except (OSError, ssl.SSLError) as e:
        raise TLSSetupError(f"CA file {tls.ca}: {getattr(e, 'strerror', None) or e}") from None
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if tls.cert:
        try:
            load_chain(ctx, tls.cert, tls.key)
        except EncryptedKey as e:
            raise TLSSetupError(f"client key refused: {e}") from None
        except (OSError, ssl.SSLError) as e:
            raise TLSSetupError(
                f"client certificate {tls.cert} / key {tls.key or '(in the same file)'}: "
                f"{getattr(e, 'strerror', None) or e}"
            ) from None
    if tls.pin_sha256:
        ctx.sslobject_class = _pinned_class(frozenset(tls.pin_sha256))
    return ctx


def without_identity(tls: ClientTLS | None) -> ClientTLS | None:
    """``tls`` checking the server as it says, showing no client certificate: for a connection to an address
    someone else chose (an mDNS announcement's), where a request proves the server, not Sentinel. The
    certificate is sent in the handshake before a pin is checked (``PinnedSSLObject`` checks a finished one)
    and, under TLS 1.2, in the clear: every host that asks and whose chain checks out would see it."""
    if tls is None or not (tls.cert or tls.key):
        return tls
    return tls.model_copy(update={"cert": None, "key": None})


def httpx_verify(tls: ClientTLS | None) -> Any:
    """``verify=`` for an httpx2 client: the context, or True (the system's store)."""
    ctx = client_context(tls)
    return ctx if ctx is not None else True
