"""Sealed ``requestState`` for the 2026-era input-required round trip.

The gateway keeps no call open between rounds: what it must remember (the question it asked, that it already
allowed this exact call, the upstream's own state) travels in the state the client echoes back. The state is
signed with a per-process key (a client cannot forge or alter it), carries its expiry, and names a nonce
from the ``NonceBook`` so that it can be used once (a client cannot replay it).
"""

from __future__ import annotations

import base64
import hmac
import json
import os
import secrets
import time
from typing import Any

from sentinel_mcp.gateway.nonce_book import MemoryNonceBook, NonceBook

PREFIX = "sentinel2."
MAX_TOKEN_CHARS = 256 * 1024  # a state larger than this was not made here
_COMPACT = json.JSONEncoder(separators=(",", ":"), sort_keys=True)  # built once (a seal per call)


class RequestStateSeal:
    def __init__(
        self, key: bytes | None = None, max_age: float = 900.0, nonces: NonceBook | None = None
    ) -> None:
        self.key = key or os.urandom(32)
        self.max_age = max_age
        self.nonces: NonceBook = nonces if nonces is not None else MemoryNonceBook()

    def seal(self, payload: dict[str, Any]) -> str:
        token, nonce, expires_at = self._sealed(payload)
        self.nonces.issue(nonce, expires_at)
        return token

    async def seal_async(self, payload: dict[str, Any]) -> str:
        """``seal``, with the nonce written off the event loop (a shared book is a database write)."""
        token, nonce, expires_at = self._sealed(payload)
        await self.nonces.issue_async(nonce, expires_at)
        return token

    def _sealed(self, payload: dict[str, Any]) -> tuple[str, str, float]:
        nonce = secrets.token_urlsafe(16)
        expires_at = time.time() + self.max_age
        body = _COMPACT.encode({**payload, "nonce": nonce, "exp": expires_at}).encode()
        mac = hmac.digest(self.key, body, "sha256")  # the one-shot C HMAC (same bytes)
        return PREFIX + base64.urlsafe_b64encode(mac + body).decode().rstrip("="), nonce, expires_at

    def open(self, token: str | None) -> dict[str, Any] | None:
        """The payload, or None when the token is absent, not ours, altered or expired. Not consumed."""
        if not isinstance(token, str) or not token.startswith(PREFIX) or len(token) > MAX_TOKEN_CHARS:
            return None
        raw = token[len(PREFIX) :]
        try:
            data = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
        except (ValueError, TypeError):
            return None
        mac, body = data[:32], data[32:]
        if not hmac.compare_digest(mac, hmac.digest(self.key, body, "sha256")):
            return None
        try:
            payload = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        if not isinstance(payload, dict) or not isinstance(payload.get("exp"), (int, float)):
            return None
        if payload["exp"] < time.time():
            return None
        return payload

    def consume(self, payload: dict[str, Any]) -> bool:
        """Use the state once: True the first time, False on every replay."""
        nonce = payload.get("nonce")
        return isinstance(nonce, str) and self.nonces.consume(nonce)

    async def consume_async(self, payload: dict[str, Any]) -> bool:
        """``consume`` off the event loop."""
        nonce = payload.get("nonce")
        return isinstance(nonce, str) and await self.nonces.consume_async(nonce)
