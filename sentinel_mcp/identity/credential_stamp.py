"""The credentials a request came with, as a stamp any process can prove again later.

A request's check (``RECHECK_KEY``) is a closure of the process that took it: a thing that outlives the
process (an A2A task waiting for the person's answer, read back after a restart or by another replica of one
store) had no check any more, and ran as its principal after the token that started it was rotated. What such
a thing keeps is this stamp: the principal, a fingerprint of each secret sent (never the secret) and the
client certificate (public). ``reprove`` asks the authenticator as it is now: each fingerprint must still be
a secret it takes, the certificate still valid, unrevoked and of a CA of the bundle, each naming the stamp's
principal; anything else (a stamp unreadable, unknown, empty) fails closed (``AuthFailed``).
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import Authenticator, AuthFailed, TokenResolver, token_digest

VERSION = 1
_DOMAIN = b"sentinel-mcp credential stamp v1\0"  # a stamp's fingerprint is no SHA-256 of the token itself
_MAX_SECRETS = 2  # a bearer token and an API key
_MAX_CHAIN = 4
_MAX_PEM = 64 * 1024


def fingerprint(digest: bytes) -> str:
    return hmac.new(_DOMAIN, digest, hashlib.sha256).hexdigest()


def stamp_of(credentials: Credentials, principal: Principal) -> dict[str, Any]:
    """What ``reprove`` needs to prove these credentials again (plain JSON)."""
    stamp: dict[str, Any] = {"v": VERSION, "principal": principal.name}
    secrets = [fingerprint(token_digest(s)) for s in (credentials.bearer, credentials.api_key) if s]
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
        return stamp_of(self.credentials, self.principal)


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
    name, secrets, chain = _read(stamp)
    credentials = Credentials(tls={"client_cert_chain": chain} if chain else None)
    for resolver in auth.resolvers:
        if isinstance(resolver, TokenResolver):
            found = _holders(resolver, secrets)
        else:
            found = resolver.resolve(credentials)
        if found is not None:
            if found.name != name:
                raise AuthFailed("its credentials name another principal now")
            return found
    raise AuthFailed("its token, API key or client certificate is not accepted now")


def _read(stamp: Any) -> tuple[str, list[str], list[str]]:
    """Type-strict: a row the process did not write as this module writes one proves nothing."""
    # (``type(...) is int``: True == 1 in Python)
    if (not isinstance(stamp, dict) or type(stamp.get("v")) is not int or stamp["v"] != VERSION
            or set(stamp) - {"v", "principal", "secrets", "chain"}):
        raise AuthFailed("the record of its credentials cannot be read")
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


def _holders(resolver: TokenResolver, secrets: list[str]) -> Principal | None:
    """As ``TokenResolver.resolve``: None when no secret was sent; a secret it does not take now, or two
    naming different principals, refuse."""
    if not secrets:
        return None
    current = resolver.current()
    names: list[Principal] = []
    for fp in secrets:
        found = None
        for digest, principal in current:  # every one compared, in constant time
            if hmac.compare_digest(fingerprint(digest), fp) and found is None:
                found = principal
        if found is None:
            raise AuthFailed("its token or API key has been replaced")
        names.append(found)
    if len({p.name for p in names}) > 1:
        raise AuthFailed("its bearer token and API key name different principals")
    return names[0]
