"""Public keys as JWK (RFC 7517) in a card signature's protected header (``jwk``, RFC 7515 §4.1.3): the signer
names the key it signed with, so a card altered after signing is refused even where no key is configured, and
a person can pin the key by its fingerprint (``peer_keys: {"name": "sha256:<hex>"}``). The key a header names
is the signer's word: it proves the card is whole, not who made it, until its fingerprint is pinned or
trusted.

EC (P-256/384/521), OKP (Ed25519, Ed448) and RSA public keys; a JWK holding a private part is refused."""

from __future__ import annotations

import base64
import binascii
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.types import PublicKeyTypes

_B64URL = re.compile(r"[A-Za-z0-9_-]{1,1400}")
_CURVES = {"P-256": "SECP256R1", "P-384": "SECP384R1", "P-521": "SECP521R1"}
_PRIVATE = ("d", "p", "q", "dp", "dq", "qi", "oth", "k")


def _int(jwk: dict[str, Any], name: str) -> int:
    return int.from_bytes(_bytes(jwk, name), "big")


def _bytes(jwk: dict[str, Any], name: str) -> bytes:
    text = jwk.get(name)
    if not isinstance(text, str) or not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError(f"JWK member {name!r} is not base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise ValueError(f"JWK member {name!r} is not base64url") from None


def public_key_of(jwk: Any) -> PublicKeyTypes:
    """The public key a JWK object holds; ValueError when it is not one Sentinel reads."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa

    if not isinstance(jwk, dict):
        raise ValueError("jwk is not a JSON object")
    if any(name in jwk for name in _PRIVATE):
        raise ValueError("jwk holds a private or symmetric key")
    kty, crv = jwk.get("kty"), jwk.get("crv")
    if kty == "EC" and crv in _CURVES:
        curve = getattr(ec, _CURVES[crv])()
        return ec.EllipticCurvePublicNumbers(_int(jwk, "x"), _int(jwk, "y"), curve).public_key()
    if kty == "OKP" and crv == "Ed25519":
        return ed25519.Ed25519PublicKey.from_public_bytes(_bytes(jwk, "x"))
    if kty == "OKP" and crv == "Ed448":
        return ed448.Ed448PublicKey.from_public_bytes(_bytes(jwk, "x"))
    if kty == "RSA":
        return rsa.RSAPublicNumbers(_int(jwk, "e"), _int(jwk, "n")).public_key()
    raise ValueError(f"jwk of kty {str(kty)[:10]!r} crv {str(crv)[:10]!r} is not read here")


def _b64(number: int, size: int | None = None) -> str:
    raw = number.to_bytes(size or max(1, (number.bit_length() + 7) // 8), "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def jwk_of(key: PublicKeyTypes) -> dict[str, str]:
    """A public key as JWK (for this agent's own signature header)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    if isinstance(key, ec.EllipticCurvePublicKey):
        size = (key.curve.key_size + 7) // 8
        crv = {v.lower(): k for k, v in _CURVES.items()}[key.curve.name]
        point = key.public_numbers()
        return {"kty": "EC", "crv": crv, "x": _b64(point.x, size), "y": _b64(point.y, size)}
    if isinstance(key, ed25519.Ed25519PublicKey):
        raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return {"kty": "OKP", "crv": "Ed25519", "x": base64.urlsafe_b64encode(raw).rstrip(b"=").decode()}
    if isinstance(key, rsa.RSAPublicKey):
        numbers = key.public_numbers()
        return {"kty": "RSA", "n": _b64(numbers.n), "e": _b64(numbers.e)}
    raise ValueError(f"{type(key).__name__} has no JWK form here")
