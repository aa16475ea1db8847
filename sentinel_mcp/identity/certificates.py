"""Mutual TLS as a principal: the client certificate the handshake verified names a principal, exactly as a
token does (same reach, same facts, consents and approvals: they belong to the principal's name).

The handshake has already checked the chain to the front's CA, the dates and the CRL. Per request this
resolver checks the dates and the CRL again (a keep-alive connection can outlive its certificate, its
revocation or the CRL's validity: an expired CRL admits no certificate, as in the handshake), then maps the
certificate through the configured rules (a rule that names an issuer matches only a certificate that CA of
the bundle signed: ``tls/trusted_cas.py``). A certificate that names
no principal, or several, is refused; so is a token that names someone other than the certificate; every
refusal is audited. In ``required`` mode a request without a certificate is refused even if it brings a token.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, NoReturn

from sentinel_mcp.core import process_clock
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import AuthFailed, PrincipalResolver
from sentinel_mcp.tls.peer_certificate import HANDSHAKE_BUNDLE, PeerCertificate, from_pem
from sentinel_mcp.tls.settings import CertificateMatch, ClientCertificates

if TYPE_CHECKING:
    from sentinel_mcp.tls.trusted_cas import TrustedCAs

# (peer address, reason, certificate facts, principal or None) -> audited
RefusedHook = Callable[[str | None, str, dict[str, str], str | None], None]


@dataclass
class CertificateResolver:
    rules: list[tuple[CertificateMatch, Principal]]
    mode: ClientCertificates = "optional"
    tokens: PrincipalResolver | None = None  # to check a token sent alongside a certificate
    is_revoked: Callable[[PeerCertificate], bool] | None = None
    on_refused: RefusedHook | None = None
    # the process clock: a wall clock set back must not make an expired certificate valid again
    now: Callable[[], dt.datetime] = field(
        default=lambda: dt.datetime.fromtimestamp(process_clock.now(), dt.timezone.utc)
    )
    # the front's CA bundle as it is now (re-read when its file changes). Without it (a caller that built a
    # one-CA front itself) a rule naming an issuer matches nothing; with it, a subject or SAN rule without an
    # issuer matches nothing while the bundle holds several CAs (refused at start; this covers a bundle that
    # grew since)
    trusted_cas: Callable[[], TrustedCAs | None] | None = None
    # why no certificate can be trusted now, or None (a CRL in force has expired: the handshake refuses
    # every certificate then, and a connection made before must not outlive that)
    crl_problem: Callable[[], str | None] | None = None

    def names(self) -> set[str]:
        """Whom a certificate can name here (its rules'): their credentials can lapse (revoked, expired)."""
        return {p.name for _, p in self.rules}

    def resolve(self, credentials: Credentials) -> Principal | None:
        chain = (credentials.tls or {}).get("client_cert_chain") or []
        if not chain:
            if self.mode == "required":
                self._refuse(credentials, None, "a client certificate is required on this front")
            return None
        try:
            cert = from_pem(chain[0])
        except ValueError as e:  # CertificateUnreadable says what (bounded)
            self._refuse(credentials, None, f"the client certificate cannot be read ({e})")
        now = self.now()
        if not cert.not_before <= now <= cert.not_after:
            self._refuse(
                credentials,
                cert,
                f"the client certificate {cert.describe()} is not valid now "
                f"(valid {cert.not_before:%Y-%m-%d} to {cert.not_after:%Y-%m-%d})",
            )
        if self.is_revoked is not None and self.is_revoked(cert):
            self._refuse(credentials, cert, f"the client certificate {cert.describe()} has been revoked")
        why = self.crl_problem() if self.crl_problem is not None else None
        if why is not None:
            self._refuse(
                credentials, cert, f"the client certificate {cert.describe()} cannot be checked: {why}"
            )
        if cert.is_ca:  # OpenSSL lets a CA certificate be a chain's leaf; a CA is nobody's identity
            self._refuse(
                credentials,
                cert,
                f"the client certificate {cert.describe()} is a CA certificate (basicConstraints CA:TRUE); "
                "a client certificate is an end-entity certificate",
            )
        cas = self.trusted_cas() if self.trusted_cas is not None else None
        issued_by = cas.issuers_of(cert.der) if cas is not None else ()
        then = (credentials.tls or {}).get(HANDSHAKE_BUNDLE)
        if then is not None and cas is not None and then is not cas and not issued_by and _dropped(then, cas):
            # a CA taken out of ``ca`` admits nothing more, on a connection made before too; the chain the
            # handshake verified is not at hand, so a certificate no CA of the bundle signed itself is asked
            # to reconnect (its chain is then checked afresh)
            self._refuse(
                credentials,
                cert,
                f"the client certificate {cert.describe()} was accepted by a CA bundle that has changed "
                "since (a CA was taken out of it); reconnect",
            )
        if cas is not None and not issued_by:
            # the CAs of ``ca`` issue client certificates, nothing below them: an intermediate the client
            # sends along (a team's CA, a CA for servers) would otherwise mint any name a rule matches
            self._refuse(
                credentials,
                cert,
                f"the client certificate {cert.describe()} was issued by {cert.issuer_text!r}, and no CA of "
                "the bundle signed it (sentinel.http.tls.ca); a CA that issues client certificates belongs "
                "in the bundle itself",
            )
        unbound_refused = cas is not None and cas.several
        found = [
            p
            for rule, p in self.rules
            if cert.matches(rule, issued_by) and not (unbound_refused and _unbound(rule))
        ]
        names = sorted({p.name for p in found})
        if not names and unbound_refused and any(_unbound(r) and cert.matches(r) for r, _ in self.rules):
            self._refuse(
                credentials,
                cert,
                f"the client certificate {cert.describe()} matches only rules that name no issuer, and the "
                'CA bundle now holds several CAs (add "issuer" or "issuer_sha256" to the rule)',
            )
        if not names:
            self._refuse(
                credentials,
                cert,
                f"the client certificate {cert.describe()} names no principal (map it "
                "in sentinel.principals[].certificate)",
            )
        if len(names) > 1:
            self._refuse(
                credentials,
                cert,
                f"the client certificate {cert.describe()} matches several principals "
                f"({', '.join(names)}); make their certificate rules exclusive",
            )
        principal = found[0]
        if credentials.presented and self.tokens is not None:
            try:
                by_token = self.tokens.resolve(credentials)
            except AuthFailed:  # a token and a key naming different principals: refused, and audited here
                by_token = None
            if by_token is None or by_token.name != principal.name:
                self._refuse(
                    credentials,
                    cert,
                    f"the client certificate names {principal.name!r} but the token "
                    "does not; send one or the other",
                    principal.name,
                )
        return principal

    def _refuse(
        self,
        credentials: Credentials,
        cert: PeerCertificate | None,
        reason: str,
        principal: str | None = None,
    ) -> NoReturn:
        if self.on_refused is not None:
            facts = (
                {}
                if cert is None
                else {
                    "subject": cert.subject_text,
                    "sha256": cert.sha256,
                    "serial": f"{cert.serial:x}",
                    "not_after": cert.not_after.isoformat(),
                }
            )
            self.on_refused(credentials.peer, reason, facts, principal)
        raise AuthFailed(reason)


def _dropped(then: TrustedCAs, now: TrustedCAs) -> bool:
    """Whether a CA of the bundle ``then`` is not in the bundle ``now``."""
    return bool({ca.sha256 for ca in then.cas} - {ca.sha256 for ca in now.cas})


def _unbound(rule: CertificateMatch) -> bool:
    """A rule any CA of the bundle could satisfy: a name without an issuer (a fingerprint pins one
    certificate)."""
    return rule.sha256 is None and rule.issuer is None and rule.issuer_sha256 is None
