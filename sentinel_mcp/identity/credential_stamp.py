"""The credentials a request came with, as a stamp any process can prove again later.

A request's check (``RECHECK_KEY``) is a closure of the process that took it: a thing that outlives the
process (an A2A task waiting for the person's answer, read back after a restart or by another replica of one
store) had no check any more, and ran as its principal after the token that started it was rotated. What such
a thing keeps is this stamp: the principal, a fingerprint of each secret sent (never the secret) and the
client certificate (public). ``reprove`` asks the authenticator as it is now: each fingerprint must still be
a secret it takes, the certificate still valid, unrevoked and of a CA of the bundle, each naming the stamp's
principal; anything else (a stamp unreadable, unknown, empty) fails closed (``AuthFailed``).

A fingerprint is an HMAC of the secret's SHA-256 under the cluster's seal key (``sentinel.cluster.seal_key``,
derived for this purpose; ``Authenticator.stamp_key``), the one every replica has and the database does not:
under a public key (version 1) whoever reads the rows tested guesses of a weak configured token offline. A
store without a seal key (an embedded one, whose readers read the data dir beside it) writes version 1 still.
A stamp of the other kind than this process writes is refused, saying why (keyed under a seal key this
process lacks; or secrets written under the public key, before the seal key was set).
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import Authenticator, AuthFailed, TokenResolver, token_digest

VERSION = 1  # fingerprints under the public domain key (no seal key configured)
KEYED = 2  # fingerprints under the seal key's ``STAMP_PURPOSE`` key
STAMP_PURPOSE = "credential stamp"  # (storage.row_signature.derived_key)
_DOMAIN = b"sentinel-mcp credential stamp v1\0"  # a stamp's fingerprint is no SHA-256 of the token itself
_MAX_SECRETS = 2  # a bearer token and an API key
_MAX_CHAIN = 4
_MAX_PEM = 64 * 1024


def fingerprint(digest: bytes, key: bytes | None = None) -> str:
    """``key``: the seal key's stamp key (None: the public domain key of version 1)."""
    return hmac.new(_DOMAIN if key is None else key, digest, hashlib.sha256).hexdigest()


def stamp_of(credentials: Credentials, principal: Principal, key: bytes | None = None) -> dict[str, Any]:
    """What ``reprove`` needs to prove these credentials again (plain JSON); ``key``: the authenticator's
    ``stamp_key``."""
    stamp: dict[str, Any] = {"v": VERSION if key is None else KEYED, "principal": principal.name}
    secrets = [fingerprint(token_digest(s), key) for s in (credentials.bearer, credentials.api_key) if s]
    if secrets:
        stamp["secrets"] = secrets
    chain = (credentials.tls or {}).get("client_cert_chain") or []
    if chain:
        stamp["chain"] = [str(pem) for pem in chain]
    return stamp


@dataclass(frozen=True)
class CredentialCheck:
    """A request's credentials checked again (``RECHECK_KEY``): called, the principal they name now
    (``AuthFailed`` when they no longer hold); ``stamp()``: the same check for another process."""

    auth: Authenticator
    credentials: Credentials
    principal: Principal

    def __call__(self) -> Principal:
        return self.auth.authenticate(self.credentials)

    def stamp(self) -> dict[str, Any]:
        return stamp_of(self.credentials, self.principal, self.auth.stamp_key)


@dataclass(frozen=True)
class StampCheck:
    """A stamp read back (from a task row), checked again: called, as ``CredentialCheck``."""

    auth: Authenticator
    stamped: dict[str, Any]

    def __call__(self) -> Principal:
        return reprove(self.auth, self.stamped)

    def stamp(self) -> dict[str, Any]:
        return self.stamped


def stamp_from(check: Any) -> dict[str, Any] | None:
    """The stamp of a request's check (None: no check, credentials that hold for the process's life)."""
    stamp = getattr(check, "stamp", None)
    return stamp() if callable(stamp) else None


def reprove(auth: Authenticator, stamp: Any) -> Principal:
    """The stamp's principal, when its credentials still hold now; ``AuthFailed`` otherwise. The chain is
    asked as ``Authenticator.authenticate`` asks it: the first resolver that names someone decides."""
    name, secrets, chain = _read(stamp, auth.stamp_key)
    credentials = Credentials(tls={"client_cert_chain": chain} if chain else None)
    for resolver in auth.resolvers:
        if isinstance(resolver, TokenResolver):
            found = _holders(resolver, secrets, auth.stamp_key)
        else:
            found = resolver.resolve(credentials)
        if found is not None:
            if found.name != name:
                raise AuthFailed("its credentials name another principal now")
            return found
    raise AuthFailed("its token, API key or client certificate is not accepted now")


def _read(stamp: Any, key: bytes | None) -> tuple[str, list[str], list[str]]:
    """Type-strict: a row the process did not write as this module writes one proves nothing."""
    # (``type(...) is int``: True == 1 in Python)
    if (not isinstance(stamp, dict) or type(stamp.get("v")) is not int or stamp["v"] not in (VERSION, KEYED)
            or set(stamp) - {"v", "principal", "secrets", "chain"}):
        raise AuthFailed("the record of its credentials cannot be read")
    if stamp["v"] == KEYED and key is None:
        raise AuthFailed("the record of its credentials was keyed with a seal key this process does not have "
                         "(sentinel.cluster.seal_key)")
    if stamp["v"] == VERSION and key is not None and stamp.get("secrets"):
        # its fingerprints are under the public key: never compared once the seal key is set (a stamp of that
        # kind is what a reader of the rows could test guesses against, or write from a token's SHA-256)
        raise AuthFailed("the record of its credentials was written before they were keyed with the seal key "
                         "(sentinel.cluster.seal_key) and cannot be proved now")
    name, secrets, chain = stamp.get("principal"), stamp.get("secrets", []), stamp.get("chain", [])
    if not isinstance(name, str) or not name:
        raise AuthFailed("the record of its credentials names nobody")
    if (not isinstance(secrets, list) or len(secrets) > _MAX_SECRETS
            or not all(isinstance(s, str) and len(s) == 64 for s in secrets)):
        raise AuthFailed("the record of its credentials cannot be read")
    if (not isinstance(chain, list) or len(chain) > _MAX_CHAIN
            or not all(isinstance(c, str) and 0 < len(c) <= _MAX_PEM for c in chain)):
        raise AuthFailed("the record of its credentials cannot be read")
    if not secrets and not chain:
        raise AuthFailed("the record of its credentials holds none")
    return name, secrets, chain


def _holders(resolver: TokenResolver, secrets: list[str], key: bytes | None) -> Principal | None:
    """As ``TokenResolver.resolve``: None when no secret was sent; a secret it does not take now, or two
    naming different principals, refuse."""
    if not secrets:
        return None
    current = resolver.current()
    names: list[Principal] = []
    for fp in secrets:
        found = None
        for digest, principal in current:  # every one compared, in constant time
            if hmac.compare_digest(fingerprint(digest, key), fp) and found is None:
                found = principal
        if found is None:
            raise AuthFailed("its token or API key has been replaced")
        names.append(found)
    if len({p.name for p in names}) > 1:
        raise AuthFailed("its bearer token and API key name different principals")
    return names[0]
