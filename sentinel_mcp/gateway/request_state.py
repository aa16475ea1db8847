"""Sealed ``requestState`` for the 2026-era input-required round trip.

The gateway keeps no call open between rounds: what it must remember (the question it asked, that it already
allowed this exact call, the upstream's own state) travels in the state the client echoes back. The state is
signed with a per-process key (a client cannot forge or alter it), carries its expiry, and names a nonce
from the ``NonceBook`` so that it can be used once (a client cannot replay it).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from typing import Any

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.json_text import compact_encoder
from sentinel_mcp.core.random_pool import token_urlsafe, urlsafe_b64
from sentinel_mcp.gateway.nonce_book import MemoryNonceBook, NoNonceBook, NonceBook

PREFIX = "sentinel2."
MAX_TOKEN_CHARS = 256 * 1024  # a state larger than this was not made here
_COMPACT = compact_encoder(sort_keys=True)  # built once (a seal per call): core/json_text.py
_BLOCK = 64  # SHA-256's block size
_INNER = bytes(x ^ 0x36 for x in range(256))
_OUTER = bytes(x ^ 0x5C for x in range(256))


class Sha256Mac:
    """HMAC-SHA256 under one key (RFC 2104; the same bytes as ``hmac.digest(key, msg, "sha256")``), with the
    key's inner and outer block hashed once. ``hmac.digest`` redoes that per call and lets go of the
    interpreter around it, a point where a storage writer thread takes it and the event loop waits (issue 21);
    hashing a short message here keeps it (``hashlib`` lets go only from 2 KiB up)."""

    def __init__(self, key: bytes) -> None:
        if len(key) > _BLOCK:
            key = hashlib.sha256(key).digest()
        key = key.ljust(_BLOCK, b"\0")
        self._inner = hashlib.sha256(key.translate(_INNER))
        self._outer = hashlib.sha256(key.translate(_OUTER))

    def digest(self, message: bytes) -> bytes:
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.digest()


class RequestStateSeal:
    def __init__(
        self, key: bytes | None = None, max_age: float = 900.0, nonces: NonceBook | None = None
    ) -> None:
        self.key = key or os.urandom(32)
        self._mac = Sha256Mac(self.key)
        self._mac_key = self.key
        self.max_age = max_age
        self.nonces: NonceBook = nonces if nonces is not None else MemoryNonceBook()

    def seal(self, payload: dict[str, Any]) -> str:
        token, nonce, expires_at = self._sealed(payload)
        # a book that writes nothing is not called (a conversation's id, sealed for every answer); told by
        # type at each seal, so a book put in its place later is written
        if type(self.nonces) is not NoNonceBook:
            self.nonces.issue(nonce, expires_at, str(payload.get("principal", "")))
        return token

    async def seal_async(self, payload: dict[str, Any]) -> str:
        """``seal``, with the nonce written off the event loop (a shared book is a database write)."""
        token, nonce, expires_at = self._sealed(payload)
        await self.nonces.issue_async(nonce, expires_at, str(payload.get("principal", "")))
        return token

    def _sealed(self, payload: dict[str, Any]) -> tuple[str, str, float]:
        nonce = token_urlsafe(16)
        expires_at = process_clock.now() + self.max_age  # a TTL: the clock that never goes back
        body = _COMPACT({**payload, "nonce": nonce, "exp": expires_at}).encode()
        mac = self._digest(body)
        return PREFIX + urlsafe_b64(mac + body).decode().rstrip("="), nonce, expires_at

    def mac(self, message: bytes) -> bytes:
        """The seal key's MAC of ``message`` (a value kept in a state that its reader must not learn: the
        policy version, ``input_rounds``)."""
        return self._digest(message)

    def _digest(self, body: bytes) -> bytes:
        if self.key is not self._mac_key:  # the key was replaced: its MAC with it
            self._mac, self._mac_key = Sha256Mac(self.key), self.key
        return self._mac.digest(body)

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
        if not hmac.compare_digest(mac, self._digest(body)):
            return None
        try:
            payload = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        if not isinstance(payload, dict) or not isinstance(payload.get("exp"), (int, float)):
            return None
        if payload["exp"] < process_clock.now():
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
