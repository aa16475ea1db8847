"""The HTTP/A2A authentication a config asks for: the owner's token (configured, or generated on first start),
the configured principals, and the A2A section's bearer token and API keys, in one resolver chain; with mutual
TLS (``sentinel.http.tls`` with a CA) the client certificate resolver comes first."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from sentinel_mcp.config import PRINCIPAL_NAME, RESERVED_PRINCIPALS, Config, ConfigError
from sentinel_mcp.identity import console_secret, owner_token
from sentinel_mcp.identity.certificates import CertificateResolver, RefusedHook
from sentinel_mcp.identity.file_secret import FileSecret
from sentinel_mcp.identity.principal import ANONYMOUS, OWNER_NAME, Principal
from sentinel_mcp.identity.resolver import Authenticator, PrincipalResolver, TokenResolver, token_digest
from sentinel_mcp.tls.peer_certificate import PeerCertificate
from sentinel_mcp.tls.settings import CertificateMatch, ServerTLS
from sentinel_mcp.storage.private_paths import private_dir
from sentinel_mcp.identity.credential_stamp import STAMP_PURPOSE
from sentinel_mcp.storage.location import LocationError, expand
from sentinel_mcp.storage.row_signature import derived_key

if TYPE_CHECKING:  # cryptography is loaded by a front with client certificates only (issue 21)
    from sentinel_mcp.tls.trusted_cas import TrustedCAs

OWNER_BY_TOKEN = Principal(OWNER_NAME, "token")


@dataclass
class HttpAuth:
    authenticator: Authenticator
    owner_token: str | None  # None with "auth": "none"
    token_file: Path | None  # where the generated token is kept (None: configured, or no auth)
    token_created: bool = False  # generated on this start: print it once
    # the console's sign-in secrets (console_secret.py): never in the fronts' chain
    console_secrets: TokenResolver | None = None
    console_secret: str | None = None  # the owner's
    console_secret_file: Path | None = None  # where the owner's generated one is kept
    console_secret_created: bool = False

    @property
    def required(self) -> bool:
        return self.authenticator.required


def configured_principals(config: Config) -> dict[str, Principal]:
    """Every principal the config names (no secrets): the configured ones and the A2A section's keys. The one
    an orchestrator acts as is an agent whichever way it signs in (``a2a_peer_names``): over MCP too its
    client is asked nothing (it would answer for the user); its questions wait in the owner's inbox."""
    agents = a2a_peer_names(config)
    out = {spec.name: Principal(spec.name, "token" if spec.token or spec.token_sha256 else "certificate",
                                tuple(spec.tools), tuple(spec.upstreams), agent=spec.name in agents)
           for spec in config.sentinel.principals}
    for name in _a2a_keys(config, None):
        out.setdefault(name, Principal(name, "token", agent=name != OWNER_NAME))
    return out


def a2a_peer_names(config: Config) -> frozenset[str]:
    """The names the A2A section's keys and bearer identity sign in as that no configured principal has, and
    the orchestrator's (``orchestrator_principal``, a configured principal or not): agents, not people (their
    questions are the owner's to answer, never their own: an orchestrator's sub-task that asked was shown to
    the orchestrator alone, which could answer it as the user)."""
    people = {spec.name for spec in config.sentinel.principals}
    orchestrator = config.sentinel.builtin_settings("a2a").get("orchestrator_principal")
    agents = set(_a2a_keys(config, None)) - people
    if isinstance(orchestrator, str):
        agents.add(orchestrator)
    return frozenset(agents - {OWNER_NAME})


def _a2a_keys(config: Config, owner: str | None) -> dict[str, str]:
    a2a = config.sentinel.builtin_settings("a2a")
    peers = dict(a2a.get("api_keys") or {})
    if isinstance(a2a.get("token"), str) and a2a["token"] != owner:
        peers[str(a2a.get("token_identity") or "bearer")] = a2a["token"]
    for name, key in peers.items():
        if not re.fullmatch(PRINCIPAL_NAME, name) or name in RESERVED_PRINCIPALS:  # no "owner\n"
            raise ConfigError(
                f"sentinel.a2a: {name!r} cannot name a principal (letters, digits, '_', '.', '-'; "
                f"not {', '.join(RESERVED_PRINCIPALS)})"
            )
        if not isinstance(key, str) or "${" in key or len(key) < 8:
            raise ConfigError(f"sentinel.a2a: the key of {name!r} must be a text of at least 8 characters")
    return peers


def certificate_resolver_for(
    config: Config,
    tokens: PrincipalResolver | None = None,
    refused: RefusedHook | None = None,
    is_revoked: Callable[[PeerCertificate], bool] | None = None,
    trusted_cas: Callable[[], TrustedCAs | None] | None = None,
    crl_problem: Callable[[], str | None] | None = None,
) -> CertificateResolver | None:
    """The client-certificate resolver of a front with mutual TLS (None without); ConfigError when a principal
    names a certificate but the front asks for none, or when a rule cannot be trusted with the CA bundle (a
    name without an issuer beside other CAs). ``trusted_cas``: the bundle as it is now (the front's contexts,
    which re-read it); by default the bundle as read here. ``crl_problem``: why no certificate can be trusted
    now (an expired CRL), checked per request."""
    tls = config.sentinel.http.tls
    mtls = isinstance(tls, ServerTLS) and tls.mode != "off"
    with_cert = [spec for spec in config.sentinel.principals if spec.certificate is not None]
    if not mtls:
        if with_cert:
            raise ConfigError(
                f"principal {with_cert[0].name!r} is known by a client certificate, but "
                "sentinel.http.tls asks for none (give it 'ca', the CA that issues them)"
            )
        return None
    assert isinstance(tls, ServerTLS)
    rules: list[tuple[CertificateMatch, Principal]] = []
    agents = a2a_peer_names(config)  # an orchestrator's certificate signs in an agent, as its token does
    if tls.owner is not None:
        rules.append((tls.owner, Principal(OWNER_NAME, "certificate")))
    for spec in with_cert:
        assert spec.certificate is not None
        rules.append(
            (spec.certificate, Principal(spec.name, "certificate", tuple(spec.tools), tuple(spec.upstreams),
                                         agent=spec.name in agents))
        )
    where = ["sentinel.http.tls.owner"] if tls.owner is not None else []
    where += [f"the certificate rule of principal {spec.name!r}" for spec in with_cert]
    assert tls.ca is not None  # a mode other than "off" needs one (ServerTLS checks)
    from sentinel_mcp.tls.trusted_cas import TrustedCAs

    try:
        at_start = TrustedCAs.from_file(tls.ca)
        at_start.check([(w, rule) for w, (rule, _) in zip(where, rules)])
    except (OSError, ValueError) as e:
        raise ConfigError(f"sentinel.http.tls.ca ({tls.ca}): {e}") from None
    return CertificateResolver(
        rules,
        tls.mode,
        tokens,
        is_revoked,
        refused,
        trusted_cas=trusted_cas or (lambda: at_start),
        crl_problem=crl_problem,
    )


def http_auth_for(
    config: Config,
    extra: list[PrincipalResolver] | None = None,
    *,
    refused: RefusedHook | None = None,
    is_revoked: Callable[[PeerCertificate], bool] | None = None,
    trusted_cas: Callable[[], TrustedCAs | None] | None = None,
    crl_problem: Callable[[], str | None] | None = None,
) -> HttpAuth:
    """Build the chain; generates the owner's token file when the config needs one and has none. ``refused``
    hears (and audits) every refused client certificate; ``is_revoked`` checks one against the current CRL."""
    http = config.sentinel.http
    tokens = TokenResolver()
    token, file, created = http.token, None, False
    if http.auth == "token" and token is None:
        file = owner_token.token_path(config.data_dir)
        try:
            private_dir(config.data_dir)  # a new data dir is the owner's only (the stores live there too)
            token, created = owner_token.load_or_create(config.data_dir)
        except (OSError, ValueError) as e:
            raise ConfigError(f"the owner's token ({file}): {e}") from None
    known = configured_principals(config)
    followed = None  # the token file, followed while Sentinel runs (a replaced one takes effect)
    try:  # one secret, one identity: refused at start, whichever way each names it
        if file is not None and token is not None:
            followed = FileSecret(file, "the owner's token", token, token_digest)
            tokens.follow(OWNER_BY_TOKEN, followed)
        elif token is not None:
            tokens.add(OWNER_BY_TOKEN, token=token)
        for spec in config.sentinel.principals:
            if spec.token is not None or spec.token_sha256 is not None:
                tokens.add(known[spec.name], token=spec.token, sha256_hex=spec.token_sha256)
        for name, key in _a2a_keys(config, token).items():
            tokens.add(known.get(name) or Principal(name, "token", agent=name != OWNER_NAME), token=key)
    except ValueError as e:
        raise ConfigError(f"sentinel: {e}") from None
    certificates = certificate_resolver_for(config, tokens, refused, is_revoked, trusted_cas, crl_problem)
    resolvers: list[PrincipalResolver] = [*([certificates] if certificates else []), *(extra or []), tokens]
    also = ", or present a client certificate of this front's CA" if certificates else ""
    authenticator = Authenticator(resolvers, required=http.auth == "token", also=also,
                                  stamp_key=stamp_key_of(config))
    auth = HttpAuth(authenticator, token, file, created)
    # under "auth": "none" too: every local process calls as anonymous, and the console is where the person
    # answers for those calls; open, any process of any local account approved the question its own call
    # waited on. The owner's console secret (a file of this user's only) signs in as anonymous there.
    auth.console_secrets, auth.console_secret, auth.console_secret_file, auth.console_secret_created = (
        _console_secrets(config, known, tokens, OWNER_BY_TOKEN if http.auth == "token" else ANONYMOUS)
    )
    if http.auth == "token":
        if followed is not None:  # a replaced token file that is also a console secret signs nobody in
            inner, signs_in = followed.held_elsewhere, auth.console_secrets
            followed.held_elsewhere = lambda d: inner(d) or _name(signs_in.holder_of(d))
    return auth


def _name(principal: Principal | None) -> str | None:
    return principal.name if principal is not None else None


def _console_secrets(
    config: Config, known: dict[str, Principal], tokens: TokenResolver, owner: Principal = OWNER_BY_TOKEN
) -> tuple[TokenResolver, str, Path | None, bool]:
    """The console's sign-in secrets: the owner's (configured, or generated beside the token), signing in as
    ``owner`` (``anonymous`` under "auth": "none", whose calls it answers), and each configured principal's.
    ConfigError when one equals a token, API key or another's console secret: it would be a bearer the
    fronts accept, and the token a sign-in (a client would answer for the user)."""
    http = config.sentinel.http
    secrets_ = TokenResolver()
    secret, file, created = http.console_secret, None, False
    if secret is None:
        file = console_secret.secret_path(config.data_dir)
        try:
            secret, created = console_secret.load_or_create(config.data_dir)
        except (OSError, ValueError) as e:
            raise ConfigError(f"the owner's console secret ({file}): {e}") from None
    given: list[tuple[Principal, str | None, str | None]] = [(owner, secret, None)]
    given += [(known[s.name], s.console_secret, s.console_secret_sha256) for s in config.sentinel.principals
              if s.console_secret is not None or s.console_secret_sha256 is not None]
    for principal, plain, digest_hex in given:
        digest = token_digest(plain) if plain is not None else bytes.fromhex(digest_hex or "")
        holder = tokens.holder_of(digest)
        if holder is not None:
            raise ConfigError(
                f"sentinel: the console secret of principal {principal.name!r} is also the token (or A2A "
                f"key) of {holder.name!r}: a console secret must be one no client holds; give it its own"
            )
        try:
            if principal is owner and file is not None:  # followed while Sentinel runs
                assert plain is not None
                source = FileSecret(file, console_secret.WHAT, plain, token_digest)
                source.held_elsewhere = lambda d: _name(tokens.holder_of(d))
                secrets_.follow(principal, source)
            else:
                secrets_.add(principal, token=plain, sha256_hex=digest_hex)
        except ValueError as e:
            raise ConfigError(f"sentinel: console secrets: {e}") from None
    return secrets_, secret, file, created


def stamp_key_of(config: Config) -> bytes | None:
    """What credential stamps are fingerprinted with (``credential_stamp.py``): the cluster's seal key for
    that purpose, the same on every replica and never in the database; None without a seal key."""
    seal_key = config.sentinel.cluster.seal_key
    if not seal_key:
        return None
    try:
        return derived_key(expand(seal_key).encode(), STAMP_PURPOSE)
    except LocationError as e:
        raise ConfigError(str(e).replace("sentinel.store", "sentinel.cluster.seal_key")) from None
