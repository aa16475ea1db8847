"""What an HTTP or WebSocket caller presented, read from the ASGI scope (one place, for every resolver)."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any

HTTP_SPACE = " \t"  # RFC 9110 OWS: the only whitespace around a header's value or after a scheme


@dataclass(frozen=True)
class Credentials:
    bearer: str | None = None  # Authorization: Bearer <token>
    api_key: str | None = None  # X-API-Key: <key>
    peer: str | None = None  # the client's address
    tls: dict[str, Any] | None = (
        None  # the ASGI "tls" extension (client certificate), for a certificate resolver
    )

    @property
    def presented(self) -> bool:
        return bool(self.bearer or self.api_key)

    @classmethod
    def from_scope(cls, scope: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> "Credentials":
        """``headers``: the scope's headers already decoded (names lower case, the last of a repeated one),
        at least ``authorization`` and ``x-api-key`` when sent (the HTTP host's caller check has them)."""
        if headers is None:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        scheme, _, value = headers.get("authorization", "").partition(" ")
        # only HTTP's whitespace (SP, HTAB) around the token: str.strip() also took a no-break space or
        # NEL off (Latin-1 header bytes): one token, many spellings (which a proxy's block list misses)
        value = value.strip(HTTP_SPACE)
        bearer = value if scheme.lower() == "bearer" and value else None
        client = scope.get("client")
        return cls(
            bearer=bearer,
            api_key=headers.get("x-api-key") or None,
            peer=client[0] if client else None,
            tls=(scope.get("extensions") or {}).get("tls"),
        )
