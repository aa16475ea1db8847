"""The error a TLS file named in the config gives (certificate, key, CA, CRL), in a module of its own: the
client side (upstreams, A2A peers) raises and catches it without importing the front's certificate code
(``server_context``: ``cryptography.x509``, ~0.1-0.2 s of a start that serves plaintext)."""

from __future__ import annotations

from sentinel_mcp.core.errors import TLSError


class TLSSetupError(TLSError, ValueError):
    """A certificate, key, CA or CRL file that cannot be used; the message names the file and the fix."""
