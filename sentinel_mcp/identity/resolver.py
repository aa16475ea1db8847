"""From credentials to a principal: one small seam every way of proving who you are plugs into.

A resolver answers ``resolve(credentials) -> Principal | None`` (None: "not mine"). Tokens and API keys are
one resolver; a client-certificate resolver (mutual TLS) is another with the same shape, added to the chain.
The ``Authenticator`` runs the chain and decides what an unknown or absent credential means.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field
from typing import Protocol

from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.file_secret import FileSecret
from sentinel_mcp.identity.principal import ANONYMOUS, Principal
from sentinel_mcp.core.errors import IdentityError

SCOPE_KEY = "sentinel.principal"  # where the HTTP host leaves the caller's Principal in the ASGI scope
# beside it on a WebSocket: a callable that resolves the upgrade request's credentials again (AuthFailed when
# they no longer hold), for every message of a connection that can outlive its certificate or its revocation
RECHECK_KEY = "sentinel.recheck"


class AuthFailed(IdentityError):
    """No valid credential: the HTTP host answers 401 with this message."""


class PrincipalResolver(Protocol):
    def resolve(self, credentials: Credentials) -> Principal | None: ...


def token_digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass
class TokenResolver:
    """Bearer tokens and API keys. Only SHA-256 digests are kept; every entry is compared, in constant time.
    """

    _entries: list[tuple[bytes, Principal]] = field(default_factory=list)
    # secrets kept in files the owner may replace while Sentinel runs (file_secret.py)
    _followed: list[tuple[FileSecret, Principal]] = field(default_factory=list)

    def add(self, principal: Principal, *, token: str | None = None, sha256_hex: str | None = None) -> None:
        """ValueError when the secret is not usable, or when another identity has it already (the first
        added would win, silently: an A2A key equal to a person's token made that peer the person)."""
        digest = token_digest(token) if token is not None else bytes.fromhex(sha256_hex or "")
        if len(digest) != 32:
            raise ValueError(f"principal {principal.name!r}: no usable token")
        self._unique(digest, principal)
        self._entries.append((digest, principal))

    def follow(self, principal: Principal, source: FileSecret) -> None:
        """``principal``'s secret, as the file ``source`` keeps it now (ValueError as ``add``). Who else
        holds a replaced file's secret is asked of this resolver's other entries and of ``source``'s own
        ``held_elsewhere``, which the caller may widen (to another resolver's)."""
        current = source.digest()
        if current is not None:
            self._unique(current, principal)
        elsewhere = source.held_elsewhere

        def held_elsewhere(digest: bytes) -> str | None:
            other = self.holder_of(digest, besides=source)
            return other.name if other is not None else elsewhere(digest)

        source.held_elsewhere = held_elsewhere
        self._followed.append((source, principal))

    def _unique(self, digest: bytes, principal: Principal) -> None:
        other = self.holder_of(digest)
        if other is not None and other.name != principal.name:
            raise ValueError(
                f"{other.name!r} and {principal.name!r} share a secret (a token, token_sha256 or A2A "
                "key): give each its own"
            )

    def followed(self) -> list[tuple[FileSecret, Principal]]:
        return list(self._followed)

    def current(self) -> list[tuple[bytes, Principal]]:
        """Every secret's digest this resolver takes now (a followed file's as it reads now), with whose."""
        found = list(self._entries)
        for source, principal in self._followed:
            digest = source.digest()
            if digest is not None:
                found.append((digest, principal))
        return found

    def principals(self) -> list[Principal]:
        """Whose fixed secrets (not followed files) this resolver holds."""
        return [p for _, p in self._entries]

    def refresh(self) -> None:
        """Look at the followed files now (at most once a second each): a replaced one takes effect."""
        for source, _ in self._followed:
            source.digest()

    def __len__(self) -> int:
        return len(self._entries) + len(self._followed)

    def resolve(self, credentials: Credentials) -> Principal | None:
        """The principal the request's secrets name. A bearer token and an API key sent together must name
        the same one: otherwise one reader of the request would take the token and another the key (and a
        wrong token beside a valid key is no sign-in), so the request is refused."""
        found = [self._holder(s) for s in (credentials.bearer, credentials.api_key) if s]
        if len(found) > 1 and len({p.name if p is not None else None for p in found}) > 1:
            raise AuthFailed(
                "the bearer token and the X-API-Key name different principals (or one names none); send one"
            )
        return found[0] if found else None

    def _holder(self, secret: str) -> Principal | None:
        return self.holder_of(token_digest(secret))

    def holder_of(self, digest: bytes, *, besides: FileSecret | None = None) -> Principal | None:
        """Who holds the secret with this SHA-256 digest (None: nobody; ``besides``: a followed file not
        asked)."""
        found = None
        for expected, principal in self._entries:  # every entry compared, in constant time
            if hmac.compare_digest(digest, expected) and found is None:
                found = principal
        for source, principal in self._followed:
            current = source.digest() if source is not besides else None
            if current is not None and hmac.compare_digest(digest, current) and found is None:
                found = principal
        return found


@dataclass
class Authenticator:
    """``required``: a caller without a credential any resolver accepts is refused (401). Not required
    (``"auth": "none"``): such callers are the one principal ``anonymous``."""

    resolvers: list[PrincipalResolver]
    required: bool = True
    also: str = ""  # other ways in, named in the refusal (", or a client certificate of this front's CA")
    # what a credential stamp's fingerprints are keyed with (credential_stamp.py): the seal key's, shared by
    # the replicas of one cluster; None: no seal key configured (the public key of version-1 stamps)
    stamp_key: bytes | None = field(default=None, repr=False)
    _lapsing: dict[str, Principal] | None = field(default=None, init=False, repr=False)

    def may_lapse(self, principal: Principal) -> bool:
        """Whether ``principal``'s secret may stop signing it in while Sentinel runs (a followed file the
        owner can replace: ``file_secret.py``), so a stream it holds open is checked again as it streams."""
        return self._lapsing_table().get(principal.name) == principal  # (a name's look-up first: no hashing)

    def may_lapse_named(self, name: str) -> bool:
        """``may_lapse`` for a principal known by its name only (a task read back from its store)."""
        return name in self._lapsing_table()

    def lasts_named(self, name: str) -> bool:
        """Whether every way ``name`` signs in now holds for the process's life: only fixed secrets of the
        config (a followed file can be replaced; a certificate revoked, expired or its CA dropped; a resolver
        that cannot say whom it names may name anyone), or nobody signs in at all (``anonymous`` of an open
        front). A name no resolver gives any more proves nothing: False."""
        if not self.required and name == ANONYMOUS.name:
            return True
        if self.may_lapse_named(name):
            return False
        fixed = False
        for r in self.resolvers:
            if isinstance(r, TokenResolver):
                fixed = fixed or any(p.name == name for p in r.principals())
                continue
            names = getattr(r, "names", None)
            if not callable(names) or name in names():
                return False
        return fixed

    def _lapsing_table(self) -> dict[str, Principal]:
        if self._lapsing is None:  # (the followed files are fixed once the chain is built: read once)
            self._lapsing = {p.name: p for r in self.resolvers if isinstance(r, TokenResolver)
                             for _, p in r.followed()}
        return self._lapsing

    def authenticate(self, credentials: Credentials) -> Principal:
        for r in self.resolvers:
            principal = r.resolve(credentials)
            if principal is not None:
                return principal
        if not self.required:
            return ANONYMOUS
        if credentials.presented:
            raise AuthFailed("invalid token or API key")
        raise AuthFailed(
            "authentication required: send 'Authorization: Bearer <token>' (or 'X-API-Key: <key>')"
            f"{self.also}; the owner's token: `sentinel-mcp config token`"
        )
