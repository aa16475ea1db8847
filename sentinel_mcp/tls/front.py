"""TLS of the HTTP front as a whole: which settings are in force, whether this binding may be plaintext, the
uvicorn options that terminate TLS, and what ``/healthz`` says about it.

``sentinel.http.tls`` covers every route (/mcp, /sse, /a2a, /a2a/ws, the agent card, /healthz). The old
``sentinel.a2a.tls_cert``/``tls_key`` still switch it on, with a deprecation warning. A non-loopback binding
without TLS refuses to start unless the config says ``"tls": "off"``.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from sentinel_mcp.config import Config, ConfigError, loopback_host
from sentinel_mcp.tls.refusals import REQUEST, RefusalLog
from sentinel_mcp.tls.settings import ServerTLS

# The certificate code (``cryptography.x509``: ~0.1-0.2 s of CPU) is imported only when TLS is on: a
# plaintext front (loopback, or "tls": "off") answers its first request without it.
if TYPE_CHECKING:
    from sentinel_mcp.tls.acceptor import TLSAcceptor
    from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts

log = logging.getLogger(__name__)

PLAINTEXT_WARNING = (
    'plaintext beyond loopback ("tls": "off"): tokens, answers and tool results travel in the clear'
)


def server_tls_settings(config: Config) -> ServerTLS | str | None:
    """``sentinel.http.tls``, else the deprecated A2A keys (warned about), else None."""
    tls = config.sentinel.http.tls
    if tls is not None:
        return tls
    a2a = config.sentinel.builtin_settings("a2a")
    cert, key = a2a.get("tls_cert"), a2a.get("tls_key")
    if isinstance(cert, str) and isinstance(key, str) and cert and key:
        message = (
            "sentinel.a2a.tls_cert/tls_key are deprecated: TLS covers the whole front now; write "
            '"http": {"tls": {"cert": ..., "key": ...}} instead'
        )
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        log.warning(message)
        return ServerTLS(
            cert=str(Path(cert).expanduser().resolve()), key=str(Path(key).expanduser().resolve())
        )
    return None


def local_ca_tls(config: Config, names: list[str] | None = None) -> ServerTLS:
    """``serve --tls-local``: TLS from the data dir's local CA, made now on first use exactly as ``tls init``
    makes
    it (a container's first start), then kept; ``names``: more DNS names for a new server certificate. Client
    certificates of that CA are optional (``tls issue NAME``). A config with its own ``sentinel.http.tls``
    wins
    nothing here: both at once is refused, so no one is unsure which certificate is served."""
    if config.sentinel.http.tls is not None:
        raise ConfigError("--tls-local and sentinel.http.tls both say how to serve TLS: keep one")
    from sentinel_mcp.tls.authority import AuthorityError, LocalCA, machine_addresses, machine_names, tls_dir

    ca = LocalCA(tls_dir(config.data_dir))
    try:
        ca.create()
        if not (ca.server_cert_path.exists() and ca.server_key_path.exists()):
            ca.issue_server(list(dict.fromkeys([*machine_names(), *(names or [])])), machine_addresses())
    except (AuthorityError, OSError) as e:
        raise ConfigError(f"--tls-local: {e}") from None
    return ServerTLS(
        cert=str(ca.server_cert_path),
        key=str(ca.server_key_path),
        ca=str(ca.ca_cert_path),
        crl=str(ca.crl_path),
    )


def front_tls(setting: ServerTLS | str | None) -> FrontTLS | None:
    if not isinstance(setting, ServerTLS):
        return None
    from sentinel_mcp.tls.server_context import FrontTLS

    return FrontTLS(
        cert=Path(setting.cert),
        key=Path(setting.key),
        ca=Path(setting.ca) if setting.ca else None,
        crl=Path(setting.crl) if setting.crl else None,
        mode=setting.mode,
        handshake_timeout=setting.handshake_timeout,
    )


def check_binding(setting: ServerTLS | str | None, host: str) -> None:
    """A non-loopback address is served over TLS, or plaintext only when the config says so."""
    if loopback_host(host) or setting is not None:
        return
    raise ConfigError(
        f"refusing to serve {host} in plaintext: beyond loopback, tokens and tool results would travel "
        'in the clear. Run `sentinel-mcp tls init` and add the "tls" lines it prints to '
        'sentinel.http, or say "http": {"tls": "off"} to accept plaintext'
    )


@dataclass
class FrontSecurity:
    """What ``serve_http`` needs: uvicorn's TLS options, the refusal log, the revocation check and the health
    summary."""

    tls: FrontTLS | None
    explicit_off: bool
    contexts: ServerContexts | None = None
    acceptor: TLSAcceptor | None = None
    refusals: RefusalLog | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"

    def audit_to(self, audit: Callable[[], Any]) -> None:
        """``audit()``: the running gateway's AuditLog, or None while it starts."""
        if self.refusals is not None:
            self.refusals.audit = audit

    @contextlib.asynccontextmanager
    async def audit_lifespan(self, _running: Any) -> AsyncIterator[None]:
        """Entered once the gateway runs (its audit log open), left before it stops: refusals held while it
        started are written then, and the count not yet written before the audit closes."""
        refusals = self.refusals
        if refusals is not None:
            await refusals.opened()
        try:
            yield
        finally:
            if refusals is not None:
                await refusals.flush()
                refusals.closed()

    def uvicorn_options(self, http_base: type | None = None, ws_base: type | None = None) -> dict[str, Any]:
        return self.acceptor.uvicorn_options(http_base, ws_base) if self.acceptor else {}

    def refused_request(
        self, peer: str | None, reason: str, certificate: dict[str, str], principal: str | None
    ) -> None:
        if self.refusals is not None:
            self.refusals.record(peer, reason, stage=REQUEST, certificate=certificate, principal=principal)

    def banner(self) -> list[str]:
        """The start-up lines about TLS."""
        warnings = [f"  warning: {n}" for n in self.notes]
        if self.tls is None:
            return warnings
        t = self.tls
        clients = {
            "off": "not asked for",
            "optional": f"optional (checked against {t.ca})",
            "required": f"required (checked against {t.ca})",
        }[t.mode]
        return [
            f"TLS: {t.cert}; client certificates {clients}" + (f"; CRL {t.crl}" if t.crl else ""),
            *warnings,
        ]

    def health(self) -> tuple[Any, list[str]]:
        """(the ``tls`` field of /healthz, problems to list)."""
        if self.explicit_off:
            return "off", [PLAINTEXT_WARNING]
        if self.tls is None or self.contexts is None:
            return "none (loopback only)", []
        return {
            "client_certificates": self.tls.mode,
            "crl": bool(self.tls.crl),
            "refused": self.refusals.total if self.refusals else 0,
        }, list(self.contexts.warnings)


def front_security(config: Config, host: str) -> FrontSecurity:
    """Checks the binding and loads the certificates (ConfigError on anything a user must fix)."""
    setting = server_tls_settings(config)
    check_binding(setting, host)
    tls = front_tls(setting)
    if tls is None:
        off = setting == "off" and not loopback_host(host)
        return FrontSecurity(None, off, notes=[PLAINTEXT_WARNING] if off else [])
    from sentinel_mcp.tls.acceptor import TLSAcceptor
    from sentinel_mcp.tls.authority import tls_dir
    from sentinel_mcp.tls.crl_mark import MARK_FILE, CrlMark
    from sentinel_mcp.tls.server_context import ServerContexts
    from sentinel_mcp.tls.setup_error import TLSSetupError

    try:
        contexts = ServerContexts(tls, CrlMark(tls_dir(config.data_dir) / MARK_FILE))
    except TLSSetupError as e:
        raise ConfigError(f"sentinel.http.tls: {e}") from None
    refusals = RefusalLog(lambda: None)
    acceptor = TLSAcceptor(contexts, lambda peer, reason: refusals.record(peer, reason))
    return FrontSecurity(tls, False, contexts, acceptor, refusals, notes=list(contexts.warnings))
