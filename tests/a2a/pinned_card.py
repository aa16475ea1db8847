"""A listed agent's card signed by a key its listing pins (``sentinel.a2a.peer_keys``): what a bridge target
(``bridge_targets``) serves so that Sentinel, fetching and checking it, relays to it without asking anyone.
Signed once per port: an ECDSA signature is drawn anew each time, and a card signed again is another card
(refused as changed after the guard's check)."""

from __future__ import annotations

from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec
from tests.a2a.test_card_signatures import card_at, pem, sign


class PinnedCard:
    def __init__(self, name: str) -> None:
        self.name = name
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.signed: dict[int, dict[str, Any]] = {}

    def __call__(self, port: int) -> dict[str, Any]:
        if port not in self.signed:
            self.signed[port] = sign(card_at(port, self.name), self.key)
        return self.signed[port]

    def settings(self, url: str) -> dict[str, Any]:
        """The a2a settings that list this agent at ``url`` and pin its key (plaintext, on loopback)."""
        return {"bridge_targets": {self.name: url}, "peer_keys": {self.name: pem(self.key)},
                "allow_loopback_plaintext": True}
