"""Agent card signatures (A2A v1.0 ``AgentCard.signatures``): detached JWS over the card's canonical form
(``card_canonical.signed_form``), each ``{"protected": b64url(header), "signature": b64url(sig)}``.

What a peer's card must show (``sentinel.a2a.peer_keys`` pins a peer's name to a key, ``trusted_keys`` lists
keys that vouch for any card):
- a peer whose card name or mDNS instance is pinned: a signature by that key (each pin that names it), or the
  card is refused; a name that reads as a pinned one but is not it (look-alike letters of another script,
  marks, invisible characters: ``core/look_alike_names.py``) is refused, whoever signed it;
- a signed card, with trusted keys configured: a signature by one of them, or it is refused (a signature that
  does not verify is a forgery or an altered card);
- a signature that is malformed, or uses an algorithm outside the asymmetric ones below (``none``, HMAC, whose
  key would be public), or asks for JWS extensions (``crit``, ``b64``): refused, whatever is configured;
- otherwise (unsigned, or signed with no key configured to check it) the peer is listed as unverified.

The algorithm is the header's, but the key decides which are possible: an EC key verifies only its curve's
ES algorithm, an RSA key RS/PS, an Ed25519/Ed448 key EdDSA (no algorithm confusion).

Freshness: a signed card verifies for ever, so an old card of a departed peer, served again from its address,
passes for it. The signature that vouches for the card (pinned or trusted key) may say when it was made
(``iat``) and until when it holds (``exp``) in its protected header (epoch seconds; RFC 7519's names):
expired, or made more than ``CLOCK_SKEW`` ahead, it is refused; older than ``CardKeys.max_age``
(``sentinel.a2a.card_max_age``) too. A time that is not a plain number is refused on any signature. An undated
signature cannot be bounded: its trust note says "undated".
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sentinel_mcp.a2a.card_canonical import NotCanonical, parse_unique, signed_form
from sentinel_mcp.a2a.card_jwk import public_key_of
from sentinel_mcp.a2a.key_files import read_key_file
from sentinel_mcp.core import process_clock
from sentinel_mcp.core.display_text import Marked, safe_text
from sentinel_mcp.core.errors import A2AError
from sentinel_mcp.core.look_alike_names import looks_alike
from sentinel_mcp.tls.settings import normalize_sha256

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.types import PublicKeyTypes

MAX_SIGNATURES = 8
MAX_HEADER_BYTES = 2048
MAX_SIGNATURE_BYTES = 1024  # RSA-8192 is 1024 bytes
_B64URL = re.compile(r"[A-Za-z0-9_-]*")
ALGORITHMS = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA")
MIN_RSA_BITS = 2048
CLOCK_SKEW = 300.0  # seconds a signer's clock may run ahead of ours
LATEST_TIME = 253402300799  # 9999-12-31T23:59:59Z: a time past it is no time


class CardRefused(A2AError):
    """The card's signatures say it must not be trusted (the reason is shown)."""


@dataclass(frozen=True)
class CardKey:
    fingerprint: str  # SHA-256 of the key's SubjectPublicKeyInfo, hex
    key: PublicKeyTypes | None  # None: pinned by fingerprint (the signature's header names the key: ``jwk``)

    @property
    def shown(self) -> str:
        return f"sha256:{self.fingerprint[:16]}"


@dataclass(frozen=True)
class CardTrust:
    verified: bool
    note: str  # how the card was (or was not) vouched for, as shown beside the peer
    key: str | None = None  # the fingerprint of the key that verified it


UNSIGNED = CardTrust(False, "unverified: the card is not signed")
UNKNOWN_SIGNER = CardTrust(False, "unverified: signed, but no key is configured to check it")


def fingerprint_of(key: PublicKeyTypes) -> str:
    from cryptography.hazmat.primitives import serialization

    der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(der).hexdigest()


def load_key(text: str) -> CardKey:
    """A public key: PEM text, the path of a PEM file, or ``sha256:<hex>`` (its SubjectPublicKeyInfo's
    fingerprint, for cards whose signature header names the key). ValueError when it is none of these."""
    from cryptography.hazmat.primitives import serialization

    if text.strip().lower().startswith("sha256:"):
        return CardKey(normalize_sha256(text), None)
    pem = text.encode() if "-----BEGIN" in text else read_key_file(text)  # bounded (a FIFO, /dev/zero)
    key = serialization.load_pem_public_key(pem)
    return CardKey(fingerprint_of(key), key)


@dataclass(frozen=True)
class CardKeys:
    pinned: dict[str, CardKey]  # a peer's name (card name or mDNS instance label) -> its key
    trusted: tuple[CardKey, ...] = ()
    max_age: float | None = None  # seconds: a vouching signature dated earlier is refused; None: no bound

    @classmethod
    def load(cls, peer_keys: dict[str, str], trusted_keys: list[str],
             max_age: float | None = None) -> CardKeys:
        return cls({name: load_key(k) for name, k in peer_keys.items()}, tuple(map(load_key, trusted_keys)),
                   max_age)

    def pins_for(self, names: list[str]) -> list[CardKey]:
        """The pins of every name that reads as one of ``names`` (case and compatibility forms folded: a
        spoofer's "ALICE" or full-width "ａｌｉｃｅ" must carry alice's signature too)."""
        wanted = {folded_name(n) for n in names}
        found: dict[str, CardKey] = {}
        for name, key in self.pinned.items():
            if folded_name(name) in wanted:
                found[key.fingerprint] = key
        return list(found.values())

    def imitated(self, names: list[str]) -> tuple[str, str] | None:
        """A name of ``names`` that reads as a pinned name but is not it ("ВООК" in Cyrillic capitals for a
        pinned "book": ``look_alike_names``), and the pinned name; None when none does. A name pinned as it
        is answers to its own pin only."""
        pinned = {folded_name(p) for p in self.pinned}
        for name in names:
            if folded_name(name) in pinned:
                continue
            for pin in self.pinned:
                if looks_alike(name, pin):
                    return name, pin
        return None


def folded_name(name: str) -> str:
    """A name as pins and peer look-ups compare it: NFKC, case-folded, trimmed. Two names that fold alike
    are one name; names that read alike but fold apart are look-alikes (``look_alike_names``), never one."""
    return unicodedata.normalize("NFKC", name).casefold().strip()


NO_KEYS = CardKeys({})


def _b64url(text: Any, what: str, limit: int) -> bytes:
    if (not isinstance(text, str) or len(text) > limit * 2 or not _B64URL.fullmatch(text)
            or len(text) % 4 == 1):
        raise CardRefused(f"a signature's {what} is not base64url")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise CardRefused(f"a signature's {what} is not base64url") from None
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode() != text:  # one spelling only (no stray bits)
        raise CardRefused(f"a signature's {what} is not base64url")
    return raw


@dataclass(frozen=True)
class _Signature:
    protected: str
    alg: str
    value: bytes
    named: CardKey | None  # the key its protected header names (``jwk``), the signer's word
    iat: float | None = None  # when it says it was signed (seconds since the epoch)
    exp: float | None = None  # until when it says it holds


def _parse(entry: Any) -> _Signature:
    if not isinstance(entry, dict) or not isinstance(entry.get("protected"), str):
        raise CardRefused("a signature is not a JWS {protected, signature}")
    header_bytes = _b64url(entry["protected"], "protected header", MAX_HEADER_BYTES)
    if len(header_bytes) > MAX_HEADER_BYTES:
        raise CardRefused("a signature's protected header is too long")
    try:
        header = parse_unique(header_bytes.decode("utf-8"))
    except (UnicodeDecodeError, NotCanonical) as e:
        raise CardRefused(f"a signature's protected header is not one JSON object: {e}"[:200]) from None
    if not isinstance(header, dict):
        raise CardRefused("a signature's protected header is not a JSON object")
    alg = header.get("alg")
    if alg not in ALGORITHMS:
        raise CardRefused(f"a signature uses algorithm {str(alg)[:20]!r}; only {', '.join(ALGORITHMS)} count")
    if "crit" in header or "b64" in header:
        raise CardRefused("a signature asks for JWS extensions (crit, b64) this agent does not implement")
    unprotected = entry.get("header")
    if unprotected is not None and (not isinstance(unprotected, dict) or "alg" in unprotected):
        raise CardRefused("a signature's unprotected header must not carry alg")
    value = _b64url(entry.get("signature"), "value", MAX_SIGNATURE_BYTES)
    named = None
    if "jwk" in header:
        try:
            key = public_key_of(header["jwk"])
        except ValueError as e:
            raise CardRefused(f"a signature's header names no usable key: {e}"[:200]) from None
        named = CardKey(fingerprint_of(key), key)
    return _Signature(entry["protected"], alg, value, named, _time(header, "iat"), _time(header, "exp"))


def _time(header: dict[str, Any], claim: str) -> float | None:
    """A protected header's ``iat`` or ``exp``: a JSON number of seconds since the epoch, or absent. Anything
    else ("1700000000", true, null, a list, past year 9999, negative) is refused: a time read loosely is a
    bound a replayer chooses."""
    if claim not in header:
        return None
    value = header[claim]
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
            or not 0 <= value <= LATEST_TIME):
        raise CardRefused(f"a signature's {claim} is not a time (seconds since the epoch, as a JSON number)")
    return float(value)


def signers(entries: Any) -> list[Any]:
    """What a card's signatures say of who signed, their times and values aside: each one's protected header
    without ``iat`` and ``exp`` (its algorithm, the key it names), or the entry as it is when it has no
    readable header. A verdict on a card is on its content and these: a signer that signs anew (a new time,
    ECDSA's new randomness) has not changed the card; another key's signature has."""
    out: list[Any] = []
    for entry in entries if isinstance(entries, list) else []:
        try:
            protected = entry["protected"] if isinstance(entry, dict) else None
            header = parse_unique(_b64url(protected, "protected header", MAX_HEADER_BYTES).decode("utf-8"))
        except (CardRefused, NotCanonical, UnicodeDecodeError):
            out.append(entry)
            continue
        out.append({k: v for k, v in header.items() if k not in ("iat", "exp")}
                   if isinstance(header, dict) else entry)
    return out


def _stale(s: _Signature, max_age: float | None, now: float) -> str | None:
    """Why the vouching signature ``s`` no longer holds (None: it does)."""
    if s.exp is not None and now >= s.exp:
        return f"its signature expired {int(now - s.exp)} s ago"
    if s.iat is not None and s.iat > now + CLOCK_SKEW:
        return f"its signature is dated {int(s.iat - now)} s in the future"
    if s.iat is not None and max_age is not None and now - s.iat > max_age:
        return (f"its signature was signed {int(now - s.iat)} s ago; cards older than {int(max_age)} s are "
                "refused (an old card served again: card_max_age)")
    return None


def _verifies(key: PublicKeyTypes, alg: str, data: bytes, sig: bytes) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa, utils

    digest = {"256": hashes.SHA256(), "384": hashes.SHA384(), "512": hashes.SHA512()}.get(alg[2:])
    try:
        if alg == "EdDSA" and isinstance(key, (ed25519.Ed25519PublicKey, ed448.Ed448PublicKey)):
            key.verify(sig, data)
            return True
        if alg.startswith("ES") and isinstance(key, ec.EllipticCurvePublicKey) and digest is not None:
            curve = {"ES256": "secp256r1", "ES384": "secp384r1", "ES512": "secp521r1"}[alg]
            size = (key.curve.key_size + 7) // 8
            if key.curve.name != curve or len(sig) != 2 * size:
                return False
            r, s = int.from_bytes(sig[:size], "big"), int.from_bytes(sig[size:], "big")
            key.verify(utils.encode_dss_signature(r, s), data, ec.ECDSA(digest))
            return True
        if alg[:2] in ("RS", "PS") and isinstance(key, rsa.RSAPublicKey) and digest is not None:
            if key.key_size < MIN_RSA_BITS:
                return False
            pad = (padding.PKCS1v15() if alg.startswith("RS")
                   else padding.PSS(mgf=padding.MGF1(digest), salt_length=digest.digest_size))
            key.verify(sig, data, pad, digest)
            return True
    except (InvalidSignature, ValueError):
        return False
    return False  # this key cannot have made a signature of this algorithm


def _signing_input(s: _Signature, payload: bytes) -> bytes:
    return s.protected.encode() + b"." + base64.urlsafe_b64encode(payload).rstrip(b"=")


def _signed_by(key: CardKey, signatures: list[_Signature], payload: bytes) -> _Signature | None:
    """The signature that verifies with ``key`` (a key pinned by fingerprint: the one a header names, when
    its fingerprint is that one); None when none does."""
    for s in signatures:
        usable = key.key if key.key is not None else (
            s.named.key if s.named is not None and s.named.fingerprint == key.fingerprint else None)
        if usable is not None and _verifies(usable, s.alg, _signing_input(s, payload), s.value):
            return s
    return None


def _fresh(trust: CardTrust, s: _Signature, keys: CardKeys, now: float) -> CardTrust:
    """``trust`` if the vouching signature ``s`` still holds (noted "undated" when it has no time)."""
    why = _stale(s, keys.max_age, now)
    if why is not None:
        raise CardRefused(why)
    if s.iat is None and s.exp is None:
        return CardTrust(trust.verified, f"{trust.note} (undated: its age cannot be checked)", trust.key)
    return trust


def check_card(card: dict[str, Any], names: list[str], keys: CardKeys, now: float | None = None) -> CardTrust:
    """How far ``card`` (the JSON object as received) is vouched for; CardRefused when it must not count.
    ``names``: what the peer is known by (its card's name, its mDNS instance label), to find its pins;
    ``now``: seconds since the epoch (the clock's when None)."""
    now = process_clock.now() if now is None else now  # never back: a clock set back revives no signature
    imitation = keys.imitated(names)
    if imitation is not None:
        raise CardRefused(Marked(f"its name {safe_text(imitation[0], 100)!r} looks like the pinned peer "
                                 f"{safe_text(imitation[1], 100)!r} but is not that name (a look-alike)"))
    pins = keys.pins_for(names)
    entries = card.get("signatures")
    if entries is None or entries == []:
        if pins:
            raise CardRefused(f"pinned to key {pins[0].shown}, but its card is not signed")
        return UNSIGNED
    if not isinstance(entries, list) or len(entries) > MAX_SIGNATURES:
        raise CardRefused(f"signatures must be a list of at most {MAX_SIGNATURES}")
    signatures = [_parse(e) for e in entries]
    try:
        payload = signed_form(card)
    except NotCanonical as e:
        raise CardRefused(f"the card has no canonical form to check a signature on: {e}"[:200]) from None
    for s in signatures:  # whoever the signer is, a signature must verify with the key it names
        if s.named is not None and s.named.key is not None and not _verifies(
                s.named.key, s.alg, _signing_input(s, payload), s.value):
            raise CardRefused("a signature does not verify with the key its header names (an altered card)")
    if pins:
        vouching = []
        for pin in pins:
            found = _signed_by(pin, signatures, payload)
            if found is None:
                raise CardRefused(f"pinned to key {pin.shown}, but no signature on its card verifies with it")
            vouching.append(found)
        trust = CardTrust(True, f"verified: signed by its pinned key {pins[0].shown}", pins[0].fingerprint)
        for found in vouching:  # each pin's signature must still hold
            trust = _fresh(trust, found, keys, now)
        return trust
    for key in keys.trusted:
        found = _signed_by(key, signatures, payload)
        if found is not None:
            return _fresh(CardTrust(True, f"verified: signed by trusted key {key.shown}", key.fingerprint),
                          found, keys, now)
    if keys.trusted:
        raise CardRefused("its signature does not verify with any trusted key (altered, or another's key)")
    named = next((s.named for s in signatures if s.named is not None), None)
    if named is not None:
        return CardTrust(False, f"unverified: signed by key sha256:{named.fingerprint} (neither pinned nor "
                                "trusted: pin it in sentinel.a2a.peer_keys to trust it)")
    return UNKNOWN_SIGNER
