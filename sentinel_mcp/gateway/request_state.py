"""Sealed ``request_state`` for the 2026-era input-required round trip.

The gateway is stateless across rounds: what it must remember (that it already allowed this exact call,
the upstream's own state) travels in the state the client echoes back, signed with a per-process key so a
client cannot forge an approval.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time
from typing import Any

PREFIX = "sentinel1."


class RequestStateSeal:
    def __init__(self, key: bytes | None = None, max_age: float = 900.0) -> None:
        self.key = key or os.urandom(32)
        self.max_age = max_age

    def seal(self, payload: dict[str, Any]) -> str:
        body = json.dumps({**payload, "t": time.time()}, separators=(",", ":"), sort_keys=True).encode()
        mac = hmac.new(self.key, body, hashlib.sha256).digest()[:16]
        return PREFIX + base64.urlsafe_b64encode(mac + body).decode().rstrip("=")

    def open(self, token: str | None) -> dict[str, Any] | None:
        """The payload, or None when the token is absent, not ours, forged or too old."""
        if not token or not token.startswith(PREFIX):
            return None
        raw = token[len(PREFIX):]
        try:
            data = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
        except (ValueError, TypeError):
            return None
        mac, body = data[:16], data[16:]
        if not hmac.compare_digest(mac, hmac.new(self.key, body, hashlib.sha256).digest()[:16]):
            return None
        try:
            payload = json.loads(body)
        except json.JSONDecodeError:
            return None
        if time.time() - float(payload.get("t", 0)) > self.max_age:
            return None
        return payload
