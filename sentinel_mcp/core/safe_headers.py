"""The headers every HTTP answer Sentinel writes carries (``app/safe_headers.py`` says why and how an app's
answer gets them), as pairs and as head lines for the answers written as bytes (the HTTP protocol's own
refusals, a plaintext request on the TLS port)."""

from __future__ import annotations

CSP = b"default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
SAFE_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"content-security-policy", CSP),
)
# the same, as head lines: for the answers the HTTP protocol writes itself, before any app is reached (a
# request it cannot parse, too slow or too large, a connection over the bound)
SAFE_HEAD_LINES = b"".join(b"%s: %s\r\n" % pair for pair in SAFE_HEADERS)
