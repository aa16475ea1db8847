"""This agent's own card signature (``sentinel.a2a.card_signing_key``): a detached JWS over the card's
canonical form (``card_canonical.signed_form``), so a peer that pinned this agent's public key can tell its
card from a spoofer's. The algorithm follows the key: EC P-256/384/521 -> ES256/384/512, Ed25519 -> EdDSA, RSA
(2048 bits or more) -> RS256. The signature is dated (``iat``, ``exp``: RFC 7519's claims in the protected
header), so a peer can refuse an old card of this agent served again (``card_max_age``); it is made anew once
half its lifetime has passed, long before it expires, and otherwise kept while the card is unchanged (ECDSA
signatures differ each time), so the card's ETag holds between. Peers take a re-signed card for the same one:
a verdict is on the card's content and its signers' keys (``discovery.Peer.digest``), not on the signature."""

from __future__ import annotations

import base64
import json
import time
from typing import Any, Callable

from sentinel_mcp.a2a.card_canonical import signed_form
from sentinel_mcp.a2a.card_jwk import jwk_of
from sentinel_mcp.a2a.key_files import read_key_file
from sentinel_mcp.a2a.card_signature import MIN_RSA_BITS, CardKey


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


DEFAULT_LIFETIME = 3600  # seconds (``sentinel.a2a.card_signature_lifetime``)


class CardSigner:
    def __init__(self, path: str, lifetime: int = DEFAULT_LIFETIME,
                 clock: Callable[[], float] = time.time) -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

        pem = read_key_file(path)  # bounded: the path may name a FIFO or /dev/zero
        self.key: Any = serialization.load_pem_private_key(pem, password=None)
        if isinstance(self.key, ec.EllipticCurvePrivateKey):
            curves = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
            if self.key.curve.name not in curves:
                raise ValueError(f"EC curve {self.key.curve.name} has no JWS algorithm (P-256, P-384, P-521)")
            self.alg = curves[self.key.curve.name]
        elif isinstance(self.key, ed25519.Ed25519PrivateKey):
            self.alg = "EdDSA"
        elif isinstance(self.key, rsa.RSAPrivateKey) and self.key.key_size >= MIN_RSA_BITS:
            self.alg = "RS256"
        else:
            raise ValueError("the card signing key must be EC (P-256/384/521), Ed25519 or RSA of 2048+ bits")
        public = self.key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
        from sentinel_mcp.a2a.card_signature import load_key

        self.public: CardKey = load_key(public)
        self.lifetime, self.clock = lifetime, clock
        self._last: tuple[bytes, int, dict[str, str]] | None = None  # payload, iat, signature

    def _raw_signature(self, data: bytes) -> bytes:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec, padding, utils

        if self.alg == "EdDSA":
            return bytes(self.key.sign(data))
        digest = {"256": hashes.SHA256(), "384": hashes.SHA384(), "512": hashes.SHA512()}[self.alg[2:]]
        if self.alg == "RS256":
            return bytes(self.key.sign(data, padding.PKCS1v15(), digest))
        r, s = utils.decode_dss_signature(self.key.sign(data, ec.ECDSA(digest)))
        size = (self.key.curve.key_size + 7) // 8
        return r.to_bytes(size, "big") + s.to_bytes(size, "big")

    def sign(self, card: dict[str, Any]) -> dict[str, Any]:
        """``card`` (its wire JSON) with this agent's signature as its only one: the last one while the card
        is unchanged and younger than half its lifetime, else one made now."""
        payload = signed_form(card)
        now = int(self.clock())
        last = self._last
        if last is None or last[0] != payload or not last[1] <= now < last[1] + self.lifetime // 2:
            header = {"alg": self.alg, "jwk": jwk_of(self.key.public_key()), "kid": self.public.fingerprint,
                      "typ": "JOSE", "iat": now, "exp": now + self.lifetime}
            protected = _b64(json.dumps(header, separators=(",", ":")).encode())
            value = self._raw_signature(f"{protected}.{_b64(payload)}".encode())
            last = self._last = (payload, now, {"protected": protected, "signature": _b64(value)})
        return {**card, "signatures": [last[2]]}
