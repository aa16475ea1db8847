"""Unit tests of the TLS parts: certificate rules (many spellings, none too lenient), the certificate
resolver's
decisions, the settings' checks, the front's context reloading, and the bounded refusal log."""

from __future__ import annotations

import datetime as dt
import ssl
import time

import pytest

from sentinel_mcp.config import ConfigError, parse_config
from sentinel_mcp.identity.certificates import CertificateResolver
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.http_auth import http_auth_for
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import AuthFailed, TokenResolver
from sentinel_mcp.tls import server_context
from sentinel_mcp.tls.peer_certificate import from_pem
from sentinel_mcp.tls.refusals import RefusalLog
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts
from sentinel_mcp.tls.settings import CertificateMatch, ServerTLS

ALICE_TOKEN = "alice-token-0123456789"
BOB_TOKEN = "bob-token-0123456789abc"


def pem(issued) -> str:  # type: ignore[no-untyped-def]
    return issued.cert.read_text()


def creds(issued=None, bearer: str | None = None) -> Credentials:  # type: ignore[no-untyped-def]
    chain = [pem(issued)] if issued is not None else []
    return Credentials(bearer=bearer, peer="192.0.2.9", tls={"client_cert_chain": chain})


def test_certificate_rules_match_exactly_what_they_say(pki):
    alice = from_pem(pem(pki.alice))
    assert alice.subject_text == "CN=alice,O=Sentinel" and alice.sha256 == pki.alice.sha256
    for subject in (
        "CN=alice,O=Sentinel",
        "CN=alice, O=Sentinel",
        "cn = alice , o = Sentinel",
        "2.5.4.3=alice,O=Sentinel",
    ):
        assert alice.matches(CertificateMatch(subject=subject)), subject
    for subject in (
        "O=Sentinel,CN=alice",
        "CN=Alice,O=Sentinel",
        "CN=alice",
        "CN=alice,O=Sentinel,C=US",
        "CN=alice+O=Sentinel",
        "CN=alic,O=Sentinel",
        "CN=alice ,O=Sentinel2",
    ):
        assert not alice.matches(CertificateMatch(subject=subject)), subject
    colons = ":".join(pki.alice.sha256[i : i + 2] for i in range(0, 64, 2)).upper()
    for fp in (pki.alice.sha256, pki.alice.sha256.upper(), colons, "sha256:" + pki.alice.sha256):
        assert alice.matches(CertificateMatch(sha256=fp)), fp
    assert not alice.matches(CertificateMatch(sha256=pki.bob.sha256))
    assert not alice.matches(
        CertificateMatch(subject="CN=alice,O=Sentinel", sha256=pki.bob.sha256)
    )  # all must
    for bad in ("abc", "zz" * 32, pki.alice.sha256 + "00", ""):
        with pytest.raises(ValueError):
            CertificateMatch(sha256=bad)
    with pytest.raises(ValueError, match="RFC 4514"):
        CertificateMatch(subject="alice")
    with pytest.raises(ValueError, match="needs"):
        CertificateMatch()


def test_subject_alternative_names_match_by_type(pki):
    cert, _ = pki.ca.sign(
        "peer", client=True, server=True, dns=["Peer.LAN"], ips=["192.0.2.7", "2001:db8::7"]
    )
    from cryptography.hazmat.primitives.serialization import Encoding

    peer = from_pem(cert.public_bytes(Encoding.PEM).decode())
    for san in ("DNS:peer.lan", "dns:PEER.LAN.", "IP:192.0.2.7", "ip:2001:db8:0::7", "IP:2001:DB8::7"):
        assert peer.matches(CertificateMatch(san=san)), san
    for san in (
        "DNS:peer.lan.evil",
        "DNS:192.0.2.7",
        "IP:192.0.2.70",
        "URI:peer.lan",
        "email:peer.lan",
        "IP:peer.lan",
        "DNS:*.lan",
    ):
        assert not peer.matches(CertificateMatch(san=san)), san
    with pytest.raises(ValueError, match="DNS:<name>"):
        CertificateMatch(san="peer.lan")


def test_the_certificate_resolver_decides_like_the_token_resolver_does(pki):
    tokens = TokenResolver()
    tokens.add(Principal("alice", "token"), token=ALICE_TOKEN)
    tokens.add(Principal("bob", "token"), token=BOB_TOKEN)
    refused: list[tuple] = []
    rules = [
        (CertificateMatch(subject="CN=alice,O=Sentinel"), Principal("alice", "certificate", ("bk__*",))),
        (CertificateMatch(sha256=pki.bob.sha256), Principal("bob", "certificate")),
        (CertificateMatch(subject="CN=bob,O=Sentinel"), Principal("robert", "certificate")),
    ]
    revoked: set[int] = set()
    r = CertificateResolver(
        rules, "optional", tokens, lambda c: c.serial in revoked, lambda *a: refused.append(a)
    )
    assert r.resolve(creds(pki.alice)) == Principal("alice", "certificate", ("bk__*",))
    assert r.resolve(creds(pki.alice, bearer=ALICE_TOKEN)).name == "alice"  # the same principal twice: fine
    assert r.resolve(creds()) is None  # optional: no certificate, the token decides
    for bad, why in (
        (creds(pki.alice, bearer=BOB_TOKEN), "but the token does not"),
        (creds(pki.alice, bearer="not-a-token-at-all"), "but the token does not"),
        (creds(pki.carol), "names no principal"),
        (creds(pki.bob), r"several principals \(bob, robert\)"),
    ):
        with pytest.raises(AuthFailed, match=why):
            r.resolve(bad)
    assert [a[0] for a in refused] == ["192.0.2.9"] * 4 and refused[2][2]["subject"] == "CN=carol,O=Sentinel"
    # checked per request too: dates (a long keep-alive connection) and the current CRL
    later = CertificateResolver(
        rules[:1], "optional", now=lambda: dt.datetime.now(dt.UTC) + dt.timedelta(days=800)
    )
    with pytest.raises(AuthFailed, match="not valid now"):
        later.resolve(creds(pki.alice))
    revoked.add(pki.alice.serial)
    with pytest.raises(AuthFailed, match="revoked"):
        r.resolve(creds(pki.alice))
    required = CertificateResolver(rules, "required", tokens)
    with pytest.raises(AuthFailed, match="required"):
        required.resolve(creds(bearer=ALICE_TOKEN))
    with pytest.raises(AuthFailed, match="cannot be read"):
        r.resolve(Credentials(tls={"client_cert_chain": ["-----BEGIN CERTIFICATE-----\nnope\n"]}))


def test_settings_are_checked(tmp_path, pki):
    base = {"cert": "c.pem", "key": "k.pem"}
    assert ServerTLS(**base).mode == "off" and ServerTLS(**base, ca="ca.pem").mode == "optional"
    for extra, why in (
        ({"client_certificates": "optional"}, "needs 'ca'"),
        ({"crl": "x.pem"}, "'crl' needs 'ca'"),
        ({"ca": "a", "client_certificates": "off", "owner": {"sha256": "ab" * 32}}, "'owner'"),
        ({"client_certificates": "sometimes", "ca": "a"}, "client_certificates"),
    ):
        with pytest.raises(ConfigError, match=why):
            parse_config({"sentinel": {"http": {"tls": {**base, **extra}}}})
    with pytest.raises(ConfigError, match="'key' without 'cert'"):
        parse_config({"mcpServers": {"x": {"url": "https://h", "tls": {"key": "k"}}}})
    for tls in ("on", "yes", True, 1):
        with pytest.raises(ConfigError):
            parse_config({"sentinel": {"http": {"tls": tls}}})
    cfg = parse_config(
        {
            "mcpServers": {"x": {"url": "https://h/mcp", "tls": {"ca": "ca.pem"}}},
            "sentinel": {"http": {"tls": {**base, "ca": "~/ca.pem"}}},
        },
        base_dir=tmp_path,
    )
    assert cfg.mcp_servers["x"].tls.ca == str(tmp_path / "ca.pem")  # relative to the config file
    assert cfg.sentinel.http.tls.cert == str(tmp_path / "c.pem") and not cfg.sentinel.http.tls.ca.startswith(
        "~"
    )
    # a principal known only by its certificate needs a front that asks for certificates
    only_cert = {"principals": [{"name": "p", "certificate": {"subject": "CN=p"}}]}
    with pytest.raises(ConfigError, match="asks for none"):
        http_auth_for(parse_config({"sentinel": {**only_cert, "data_dir": str(tmp_path)}}))
    with pytest.raises(ConfigError, match="exactly one of 'token' and 'token_sha256'"):
        parse_config({"sentinel": {"principals": [{"name": "p"}]}})


def test_the_owner_can_be_a_certificate(tmp_path, pki):
    owner = pki.ca.issue_client("owner")
    cfg = parse_config(
        {
            "sentinel": {
                "data_dir": str(tmp_path),
                "http": {
                    "tls": {
                        "cert": str(pki.server.cert),
                        "key": str(pki.server.key),
                        "ca": str(pki.ca.ca_cert_path),
                        "owner": {"sha256": owner.sha256},
                    }
                },
            }
        }
    )
    who = http_auth_for(cfg).authenticator.authenticate(creds(owner))
    assert who.name == "owner" and who.kind == "certificate" and who.is_owner
    with pytest.raises(AuthFailed, match="names no principal"):
        http_auth_for(cfg).authenticator.authenticate(creds(pki.alice))


def test_the_front_rereads_its_files_and_keeps_serving_when_new_ones_are_broken(pki, monkeypatch):
    monkeypatch.setattr(server_context, "RECHECK_SECONDS", 0.0)
    ca = pki.ca
    contexts = ServerContexts(
        FrontTLS(pki.server.cert, pki.server.key, ca.ca_cert_path, ca.crl_path, "required")
    )
    first = contexts.current()
    assert first.verify_mode == ssl.CERT_REQUIRED and first.verify_flags & ssl.VERIFY_CRL_CHECK_LEAF
    assert contexts.is_revoked(from_pem(pem(pki.revoked))) and not contexts.is_revoked(
        from_pem(pem(pki.alice))
    )
    time.sleep(0.01)
    ca.revoke(f"{pki.alice.serial:x}")
    assert contexts.is_revoked(from_pem(pem(pki.alice)))  # a new CRL counts from the next request
    assert contexts.current() is not first
    good = contexts.current()
    ca.crl_path.write_text("not a CRL")
    assert contexts.current() is good and "cannot be used" in contexts.warnings[0]


def test_an_expiring_crl_is_a_warning(pki, monkeypatch):
    from sentinel_mcp.tls import authority

    monkeypatch.setattr(authority, "CRL_DAYS", 3)
    pki.ca.write_crl()
    contexts = ServerContexts(
        FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, pki.ca.crl_path, "optional")
    )
    assert any("every client certificate is refused" in w for w in contexts.warnings)


async def test_refusals_are_audited_within_bounds(tmp_path):
    """Into the real (write-ahead, hash-chained) audit log; a log that cannot be written never raises into the
    connection's path, and neither does a gateway that is still starting."""
    import asyncio

    from sentinel_mcp.gateway.audit import AuditLog

    audit = await AuditLog(tmp_path / "audit.db").open()
    try:
        log = RefusalLog(lambda: audit, burst=3, window=0.2)
        for i in range(10):
            log.record(f"10.0.0.{i}", "client certificate refused: certificate has expired")
        assert log.suppressed == 7 and log.total == 10
        await asyncio.sleep(0.25)
        log.record("10.0.0.99", "client certificate refused: unknown ca")
        while log._pending:
            await asyncio.gather(*list(log._pending))
        written = await audit.read(tail=50)
        assert len(written) == 5, written
        assert "7 more certificate refusals" in written[3]["reason"] and written[4]["client"] == "10.0.0.99"
        assert all(e["origin"] == "tls" and e["decision"] == "deny" for e in written)
    finally:
        await audit.close()

    class Broken:
        async def write(self, entry):  # type: ignore[no-untyped-def]
            raise OSError("disk full")

    broken = RefusalLog(lambda: Broken())
    broken.record("10.0.0.2", "x")  # logged, never raises
    await asyncio.gather(*list(broken._pending))
    starting = RefusalLog(lambda: None)
    starting.record("10.0.0.1", "x")  # the gateway is not up yet: logged, never raises
    assert starting.total == 1 and broken.total == 1
