"""The front's SSL context: its certificate, and with a CA the clients' certificates, checked by OpenSSL in
the handshake (chain to the CA, validity dates, the CRL). Rebuilt when one of its files changes, so a renewed
certificate or a new revocation list counts from the next connection on, without a restart.

The rebuild reads and parses every file (a CRL may be 16 MiB, a key is parsed): never on the event loop. A
thread builds it and swaps it in whole; a connection or a request over TLS awaits the rebuild under way
(``fresh``), the loop serving everything else meanwhile."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import ssl
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509

from sentinel_mcp.tls.crl_freshness import Freshness, expired_at, freshness, newest, rolled_back
from sentinel_mcp.tls.crl_mark import CrlMark, CrlMarkError
from sentinel_mcp.tls.file_modes import not_a_file, readable_by_others, replaceable_by_others
from sentinel_mcp.tls.peer_certificate import HANDSHAKE_BUNDLE, PeerCertificate
from sentinel_mcp.tls.pem_blocks import (
    CA_LABELS, CRL_LABELS, UnpairedBlock, blocks, foreign_labels, load_trust)
from sentinel_mcp.tls.refusal_reply import AlertingContext
from sentinel_mcp.tls.settings import ClientCertificates
from sentinel_mcp.tls.setup_error import TLSSetupError
from sentinel_mcp.tls.trusted_cas import TrustedCAs
from sentinel_mcp.tls.unencrypted_key import EncryptedKey, load_chain
from sentinel_mcp.core import process_clock
from sentinel_mcp.core.outside_file import TooLarge, read_judged_bytes
from sentinel_mcp.core.display_text import compose, safe_text

log = logging.getLogger(__name__)
RECHECK_SECONDS = 1.0  # how often the files' change times are looked at (at most once per connection)
# a rebuild that took T seconds is followed by at least this many times T without one: files rewritten
# without pause (a fetching loop, a hostile writer) take at most a tenth of a core, however large they are
REBUILD_SPACING = 9.0
# the most a CA bundle or CRL file may hold: read whole and parsed on the event loop when it changes, and a
# CRL is often fetched over plain HTTP. A CA's CRL of a hundred thousand revocations is about 4 MiB
MAX_TRUST_FILE_BYTES = 16 * 1024 * 1024
# TLS 1.2 suites: forward-secret key exchange with an AEAD cipher only (TLS 1.3's are all such). Python's
# default list also took the CBC suites with HMAC, whose MAC-then-encrypt records padding oracles live in
TLS12_SUITES = "ECDHE+AESGCM:ECDHE+CHACHA20:!aNULL"


@dataclass(frozen=True)
class FrontTLS:
    cert: Path
    key: Path
    ca: Path | None = None
    crl: Path | None = None
    mode: ClientCertificates = "off"
    handshake_timeout: float = 10.0

    @property
    def files(self) -> tuple[Path, ...]:
        return tuple(p for p in (self.cert, self.key, self.ca, self.crl) if p is not None)


def _readable(path: Path, what: str) -> None:
    why = not_a_file(path)  # a FIFO or a device was said to be "not found"
    if why is not None:
        raise TLSSetupError(f"{what} file refused: {why}")
    if not path.is_file():
        raise TLSSetupError(
            f"{what} file not found: {path} (`sentinel-mcp tls init` makes a local CA and a server "
            "certificate)"
        )
    try:
        with path.open("rb"):
            pass
    except OSError as e:
        raise TLSSetupError(f"{what} file {path}: {e.strerror}") from None
    why = replaceable_by_others(path)
    if why is not None:
        raise TLSSetupError(f"{what} file refused: {why}")


Revoked = frozenset[tuple[str, int]]  # (issuer, serial number)


def _crl_blocks(path: Path, data: bytes) -> list[bytes]:
    try:
        return blocks(data, "X509 CRL")
    except UnpairedBlock as e:
        raise TLSSetupError(f"{path}: {e}; a PEM file holds whole blocks only") from None


def check_crl(
    crl_path: Path, ca_path: Path, data: bytes, ca_data: bytes
) -> tuple[list[str], Revoked, Freshness]:
    """The CRL file (``data``, as read once) must be PEM CRLs only, the first, and each under a CA's name,
    signed by one of the CAs (``ca_data``). Returns warnings (an expired CRL makes OpenSSL refuse every
    client certificate) and the revoked certificates of every CRL in the file, for the per-request check
    (OpenSSL reads them all: a certificate revoked by the second CRL was refused in the handshake, yet kept
    its kept-alive connection when only the first was read here), and how recent each CA's CRL is
    (``crl_freshness.py``)."""
    if b"-----BEGIN X509 CRL-----" not in data:
        raise TLSSetupError(
            f"CRL file {crl_path} is not a PEM CRL (convert a DER one with "
            "`openssl crl -inform DER -in FILE -out crl.pem`)"
        )
    foreign = foreign_labels(data, CRL_LABELS)
    if foreign:  # OpenSSL would trust a certificate found here as a CA (pem_blocks.py)
        raise TLSSetupError(
            f"CRL file {crl_path} holds {', '.join(foreign)} beside its CRLs; a CRL file holds CRLs only "
            f"(a CA belongs in {ca_path})"
        )
    try:
        crls = [x509.load_pem_x509_crl(block) for block in _crl_blocks(crl_path, data)]
        cas = x509.load_pem_x509_certificates(ca_data)
    except ValueError as e:
        raise TLSSetupError(f"CRL file {crl_path}: {e}") from None
    if not crls:
        raise TLSSetupError(f"CRL file {crl_path} is not a PEM CRL")
    # every CRL under the name of a CA of the bundle, not the first alone: one signed by anybody under a CA's
    # name revoked what it listed on every request, and OpenSSL, preferring the latest, failed on its
    # signature and refused every client of that CA. A CRL of another issuer (an intermediate CA the clients
    # send along, whose certificate is not here to check it) can only concern chains through that CA, which
    # OpenSSL checks it against and the bundle's own checks refuse (``identity/certificates.py``)
    for number, crl in enumerate(crls, 1):
        named = [ca for ca in cas if ca.subject == crl.issuer]
        if not (named or number > 1) or (named and not any(
                crl.is_signature_valid(ca.public_key()) for ca in named)):  # type: ignore[arg-type]
            # (the issuer is the file's word: marked)
            which = compose(f"its CRL {number} (issuer ", safe_text(crl.issuer.rfc4514_string(), 200), ")")
            raise TLSSetupError(compose(
                f"CRL file {crl_path} refused: ", which if len(crls) > 1 else "it",
                f" is not signed by a CA of {ca_path}; only a CA of the bundle revokes under its name"))
    warnings = []
    revoked: set[tuple[str, int]] = set()
    soon = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=7)
    for crl in crls:
        next_update = crl.next_update_utc
        if next_update is not None and next_update < soon:
            warnings.append(
                f"the CRL {crl_path} of {crl.issuer.rfc4514_string()} expires {next_update:%Y-%m-%d %H:%M} "
                "UTC; after that every client certificate is refused until a new one is written "
                "(`sentinel-mcp tls revoke` or `tls crl` writes one)"
            )
        issuer = crl.issuer.rfc4514_string()
        revoked |= {(issuer, r.serial_number) for r in crl}
    return warnings, frozenset(revoked), freshness(crls, cas)


def build_server_context(
    tls: FrontTLS,
) -> tuple[ssl.SSLContext, list[str], Revoked, TrustedCAs | None, Freshness]:
    """The context, warnings, the revoked certificates, the CA bundle and how recent its CRLs are, all from
    one read of each file: the bundle the rules are checked with is the one OpenSSL verifies with."""
    _readable(tls.cert, "TLS certificate")
    _readable(tls.key, "TLS key")
    ctx = AlertingContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_ciphers(TLS12_SUITES)
    # a client's renegotiation is a handshake past the handshake bounds (and may bring another certificate):
    # OpenSSL 3 refuses it by default, 1.1.1 does not
    ctx.options |= ssl.OP_NO_RENEGOTIATION
    # no sealed session tickets: their key lives as long as this context (until a file changes), and it
    # opens every TLS 1.2 session of that time. Sessions resume from the context's own cache instead (a
    # TLS 1.3 ticket then only names one), bounded by OpenSSL's cache size
    ctx.options |= ssl.OP_NO_TICKET
    ctx.set_alpn_protocols(["http/1.1"])
    try:
        load_chain(ctx, str(tls.cert), str(tls.key))
    except EncryptedKey as e:
        raise TLSSetupError(f"TLS key refused: {e}") from None
    except ssl.SSLError as e:
        raise TLSSetupError(
            f"TLS certificate {tls.cert} and key {tls.key} do not load together ({e.reason or e}); "
            "is the key the certificate's?"
        ) from None
    warnings: list[str] = []
    if readable_by_others(tls.key):
        warnings.append(f"TLS key {tls.key} may be read by every account on this machine; make it chmod 600")
    revoked: Revoked = frozenset()
    fresh: Freshness = {}
    if tls.mode == "off":
        return ctx, warnings, revoked, None, fresh
    assert tls.ca is not None
    _readable(tls.ca, "TLS client CA")
    ca_data = _read(tls.ca, "TLS client CA")
    foreign = foreign_labels(ca_data, CA_LABELS)
    if foreign:  # OpenSSL would trust what the bundle's own checks (trusted_cas.py) do not see
        raise TLSSetupError(
            f"TLS client CA {tls.ca} holds {', '.join(foreign)}; a CA bundle holds CERTIFICATE blocks (and "
            "CRLs) only (`openssl x509 -in FILE` writes one as CERTIFICATE)"
        )
    try:
        cas = TrustedCAs.from_pem(ca_data)
    except ValueError as e:
        raise TLSSetupError(f"TLS client CA {tls.ca}: {e}") from None
    trust = ca_data
    if tls.crl is not None:
        _readable(tls.crl, "TLS CRL")
        crl_data = _read(tls.crl, "TLS CRL")
        more, revoked, fresh = check_crl(tls.crl, tls.ca, crl_data, ca_data)
        warnings += more
        trust += b"\n" + crl_data
        # every certificate of the chain, not the client's alone: a CA that revoked an intermediate CA
        # (one the client sends along, or one in ``ca``) no longer admits what that intermediate signs
        ctx.verify_flags |= ssl.VERIFY_CRL_CHECK_CHAIN
    in_bundle = _crl_blocks(tls.ca, ca_data)
    if in_bundle:
        # OpenSSL reads the CRLs of a CA file too, but checks none without the flag: a certificate a CRL of
        # the bundle revoked was admitted. They count as the crl file's, in the handshake and per request
        more, also_revoked, also_fresh = check_crl(tls.ca, tls.ca, b"\n".join(in_bundle), ca_data)
        warnings += more
        revoked, fresh = revoked | also_revoked, newest(fresh, also_fresh)
        ctx.verify_flags |= ssl.VERIFY_CRL_CHECK_CHAIN
    try:
        load_trust(ctx, trust)  # the bytes checked above, never the files read again
    except ssl.SSLError as e:
        raise TLSSetupError(f"TLS client CA {tls.ca}: no PEM certificates ({e.reason or e})") from None
    ctx.verify_mode = ssl.CERT_REQUIRED if tls.mode == "required" else ssl.CERT_OPTIONAL
    return ctx, warnings, revoked, cas, fresh


def _read(path: Path, what: str) -> bytes:
    """The file's bytes, never more than ``MAX_TRUST_FILE_BYTES`` read, from the descriptor the trust rule
    judged (``core/trusted_path.py``): a file put in its place after ``_readable`` looked is not read."""
    try:
        data, why = read_judged_bytes(path, MAX_TRUST_FILE_BYTES)
    except TooLarge:
        raise TLSSetupError(f"{what} file {path} is larger than {MAX_TRUST_FILE_BYTES} bytes, the most a CA "
                            "bundle or CRL file may hold here") from None
    except OSError as e:
        raise TLSSetupError(f"{what} file {path}: {e.strerror}") from None
    if why is not None:
        raise TLSSetupError(f"{what} file refused: {why}")
    return data


def _handshake_bundle(ctx: ssl.SSLContext, cas: TrustedCAs | None) -> None:
    """The CA bundle a context verifies clients with, kept on it for the TLS extension of its connections
    (``acceptor.tls_extension``)."""
    setattr(ctx, HANDSHAKE_BUNDLE, cas)


@dataclass(frozen=True)
class _InForce:
    """What one build made, swapped in whole: a request is checked against the bundle and CRLs its handshake
    could have used."""

    ctx: ssl.SSLContext
    revoked: Revoked
    cas: TrustedCAs | None
    fresh: Freshness


def _on_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class ServerContexts:
    """The current context for each new connection; files re-read when their change time moves.

    ``mark``: where the CRLs' "never back in time" mark outlives a restart (``crl_mark.py``); without one it
    is kept in memory only."""

    def __init__(self, tls: FrontTLS, mark: CrlMark | None = None) -> None:
        self.tls = tls
        stamp = self._stamps()  # before the files are read: a change while they are is seen at the next check
        ctx, self.warnings, revoked, cas, fresh = build_server_context(tls)
        self._in_force = _InForce(ctx, revoked, cas, fresh)
        self._mark = mark
        # each CA's newest CRL ever in force here (the mark's, and the files' since): none is taken back
        self._high: Freshness = {}
        if mark is not None and tls.mode != "off":
            try:
                held = mark.load()
            except CrlMarkError as e:  # the start is refused, naming the file
                raise TLSSetupError(str(e)) from None
            trusted = {ca.sha256 for ca in cas.cas} if cas is not None else set()
            why = rolled_back(held, fresh, trusted)
            if why is not None:
                raise TLSSetupError(
                    f"TLS CRLs ({tls.crl or tls.ca}) refused: {why}, as recorded in {mark.path} before this "
                    "start. Write the current CRL (`sentinel-mcp tls crl`), or remove that file to take the "
                    "CRL files as they are")
            self._high = held
            self._keep_mark()
        else:
            self._high = dict(fresh)
        _handshake_bundle(ctx, cas)
        self._stamp = stamp
        self._checked = time.monotonic()
        self._lock = threading.Lock()
        self._job: Future[None] | None = None  # the rebuild under way (one at a time)
        self._not_before = 0.0  # (monotonic) when the next rebuild may start

    @property
    def revoked(self) -> Revoked:
        return self._in_force.revoked

    def _stamps(self) -> tuple[tuple[int, ...], ...]:
        """What says a file changed: its modification time and size, which a fetching tool may keep the
        same (``curl -R``, ``rsync -t`` keep the source's time; a reissued CRL may keep its size), so its
        change time and inode too, which no writer sets back."""
        out: list[tuple[int, ...]] = []
        for p in self.tls.files:
            try:
                st = os.stat(p)
                out.append((st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino, st.st_dev))
            except OSError:
                out.append((0, 0))
        return tuple(out)

    def current(self) -> ssl.SSLContext:
        """The context in force. A change seen starts a rebuild in a thread; a caller on the event loop goes
        on with the context in force (``fresh`` awaits the new one), a caller without a loop waits for it."""
        job = self._look()
        if job is not None and not _on_loop():
            job.result()
        return self._in_force.ctx

    async def fresh(self) -> ssl.SSLContext:
        """The context once the files as they are now are in force: a rebuild under way (or one a change
        just seen starts) is awaited off the loop."""
        job = self._look()
        if job is not None:
            await asyncio.wrap_future(job)
        return self._in_force.ctx

    def _look(self) -> Future[None] | None:
        """The rebuild under way, or a new one when the files' stamps moved (looked at once per
        RECHECK_SECONDS: a few ``stat`` calls); None when the context in force is the files'."""
        if self._job is None and time.monotonic() - self._checked < RECHECK_SECONDS:
            return None  # (every request asks: no lock taken while nothing is due)
        with self._lock:
            if self._job is not None:
                return self._job
            now = time.monotonic()
            if now - self._checked < RECHECK_SECONDS:
                return None
            self._checked = now
            stamp = self._stamps()
            if stamp == self._stamp:
                return None
            self._stamp = stamp  # (a file that cannot be used is not read again until it changes again)
            job: Future[None] = Future()
            self._job = job
        threading.Thread(target=self._run, args=(job,), name="sentinel-tls-rebuild", daemon=True).start()
        return job

    def _run(self, job: Future[None]) -> None:
        try:
            wait = self._not_before - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            started = time.monotonic()
            try:
                self._rebuild()
            except Exception:  # noqa: BLE001 - the thread's end is no one's: logged, the old context serves
                log.exception("TLS: rebuilding the context failed; still serving the previous one")
            took = time.monotonic() - started
            with self._lock:
                self._not_before = time.monotonic() + REBUILD_SPACING * took
                self._job = None
        finally:
            job.set_result(None)

    def _rebuild(self) -> None:
        try:
            ctx, warnings, revoked, cas, fresh = build_server_context(self.tls)
            trusted = {ca.sha256 for ca in cas.cas} if cas is not None else set()
            if self._mark is not None and self.tls.mode != "off":
                # what other instances of this data dir recorded since counts too
                self._high = newest(self._high, self._mark.recorded())
            why = rolled_back(self._high, fresh, trusted)
            if why is not None:
                raise TLSSetupError(f"TLS CRLs ({self.tls.crl or self.tls.ca}) refused: {why}")
            _handshake_bundle(ctx, cas)
            # all at once: a request is checked against the bundle its handshake could have used
            self._in_force, self.warnings = _InForce(ctx, revoked, cas, fresh), warnings
            self._keep_mark()
            log.warning("TLS: certificate, CA or CRL changed; new connections use the new files")
        except (TLSSetupError, OSError) as e:
            # keep serving with what was valid; the problem is logged and shown by /healthz
            self.warnings = [f"TLS files changed but cannot be used, still serving the previous ones: {e}"]
            log.error(self.warnings[0])

    def _keep_mark(self) -> None:
        """The mark moved forward to the CRLs in force (and written, with a mark file)."""
        if self._mark is None or self.tls.mode == "off":
            self._high = newest(self._high, self._in_force.fresh)
            return
        try:
            self._high = self._mark.save(self._high, self._in_force.fresh)
        except (OSError, CrlMarkError) as e:
            # the CRL in force is served all the same (the newest seen); only a restart would not know it
            self._high = newest(self._high, self._in_force.fresh)
            why = str(e) if isinstance(e, CrlMarkError) else (
                f"{self._mark.path} cannot be written ({e.strerror or e})")
            problem = (f"the CRL mark is not kept: {why}; after a restart an older CRL would not be "
                       "refused")
            self.warnings = [*self.warnings, problem]
            log.error("TLS: %s", problem)

    def is_revoked(self, cert: PeerCertificate) -> bool:
        """The certificate, or a CA of ``ca`` that signed it, is on a CRL (the chain the handshake verified is
        not at hand: an intermediate the client sent along is checked in the handshake only)."""
        self.current()  # a CRL written since the last connection counts for this request too
        in_force = self._in_force
        revoked, cas = in_force.revoked, in_force.cas
        if (cert.issuer_text, cert.serial) in revoked:
            return True
        return cas is not None and any(
            (ca.certificate.issuer.rfc4514_string(), ca.certificate.serial_number) in revoked
            for ca in cas.issuers_of(cert.der)
        )

    def crl_problem(self) -> str | None:
        """Why no client certificate can be trusted now (a CRL in force has expired), or None: the handshake
        refuses them all then, and a connection made before is refused per request as well."""
        self.current()  # a CRL written since counts
        # the process clock: a wall clock set back must not make an expired CRL fresh again
        expired = expired_at(self._in_force.fresh, process_clock.now())
        if expired is None:
            return None
        when = dt.datetime.fromtimestamp(expired, dt.timezone.utc)
        return (f"a CRL of {self.tls.crl or self.tls.ca} expired at {when:%Y-%m-%d %H:%M} UTC; no client "
                "certificate is accepted until a new one is written (`sentinel-mcp tls crl`)")

    def trusted_cas(self) -> TrustedCAs | None:
        """The CAs of the bundle as it is now (None when no client certificate is asked for)."""
        self.current()
        return self._in_force.cas

    def reload_now(self) -> None:
        """The files as they are now put in force before this returns, waiting for the rebuild in place
        wherever it is called (a test's, an operator's explicit "now"; the serving paths use ``fresh``): a
        change made during one rebuild is taken by the next (a few rounds at most: files that never settle
        are not waited on for ever)."""
        for _ in range(4):
            with self._lock:
                self._checked = 0.0
            job = self._look()
            if job is None:
                return
            job.result()
