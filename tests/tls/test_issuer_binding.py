"""A certificate rule bound to its issuer: with several CAs in the ``ca`` bundle, any of them can issue
any subject or SAN (``CN=owner,O=Sentinel`` included), so a rule names the CA that must have signed the
certificate (``issuer`` by subject, ``issuer_sha256`` by the CA certificate's fingerprint), and a name rule
without one is refused at start (red team "identity", finding 1)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization

from sentinel_mcp.config import ConfigError, parse_config
from sentinel_mcp.identity.certificates import CertificateResolver
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.http_auth import http_auth_for
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import AuthFailed
from sentinel_mcp.tls import server_context
from sentinel_mcp.tls.authority import LocalCA
from sentinel_mcp.tls.peer_certificate import colon_hex, from_pem
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts
from sentinel_mcp.tls.settings import CertificateMatch
from sentinel_mcp.tls.trusted_cas import TrustedCAs


def creds(issued: Any) -> Credentials:
    return Credentials(peer="192.0.2.9", tls={"client_cert_chain": [issued.cert.read_text()]})


def ca_of(ca: LocalCA) -> Any:
    return TrustedCAs.from_file(ca.ca_cert_path).cas[0]


def bundle(tmp: Path, *cas: LocalCA) -> Path:
    path = tmp / f"bundle-{len(list(tmp.glob('bundle-*')))}.pem"
    path.write_bytes(b"".join(ca.ca_cert_path.read_bytes() for ca in cas))
    return path


def impostor_of(real: LocalCA, directory: Path) -> LocalCA:
    """A CA with its own key under exactly the real CA's subject (a name is no proof of who signed)."""
    fake = LocalCA(directory)
    fake.create()
    key = serialization.load_pem_private_key(fake.ca_key_path.read_bytes(), None)
    mine = x509.load_pem_x509_certificate(fake.ca_cert_path.read_bytes())
    subject = x509.load_pem_x509_certificate(real.ca_cert_path.read_bytes()).subject
    now = dt.datetime.now(dt.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(mine.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=30))
    )
    for ext in mine.extensions:
        builder = builder.add_extension(ext.value, ext.critical)
    cert = builder.sign(key, hashes.SHA256())  # type: ignore[arg-type]
    fake.ca_cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return LocalCA(directory)  # read afresh: it signs under the copied subject


def config(tmp: Path, pki: Any, ca: Path, owner: dict[str, str] | None, principals: list[Any]) -> Any:
    tls: dict[str, Any] = {"cert": str(pki.server.cert), "key": str(pki.server.key), "ca": str(ca)}
    if owner is not None:
        tls["owner"] = owner
    return parse_config(
        {"sentinel": {"data_dir": str(tmp / "state"), "http": {"tls": tls}, "principals": principals}}
    )


def test_an_issuer_rule_matches_only_certificates_that_ca_signed(tmp_path, pki):
    cas = TrustedCAs.from_file(bundle(tmp_path, pki.ca, pki.other_ca))
    ours, theirs = ca_of(pki.ca), ca_of(pki.other_ca)
    alice, stranger = from_pem(pki.alice.cert.read_text()), from_pem(pki.stranger.cert.read_text())
    assert stranger.subject == alice.subject  # the other CA's CN=alice
    assert cas.issuers_of(alice.der) == (ours,) and cas.issuers_of(stranger.der) == (theirs,)
    by_ours = [
        {"issuer": ours.subject_text},
        {"issuer": " , ".join(ours.subject_text.split(","))},  # spacing does not matter
        {"issuer_sha256": ours.sha256},
        {"issuer_sha256": colon_hex(ours.sha256)},  # as openssl prints it
        {"issuer": ours.subject_text, "issuer_sha256": ours.sha256},
    ]
    for issuer in by_ours:
        rule = CertificateMatch(subject="CN=alice,O=Sentinel", **issuer)
        assert alice.matches(rule, cas.issuers_of(alice.der)), issuer
        assert not stranger.matches(rule, cas.issuers_of(stranger.der)), issuer
        assert not alice.matches(rule), issuer  # issuer unknown: no match
    for issuer in (
        {"issuer": theirs.subject_text},
        {"issuer_sha256": theirs.sha256},
        {"issuer": ours.subject_text, "issuer_sha256": theirs.sha256},  # both parts must be the same CA
        {"issuer": "CN=alice,O=Sentinel"},
        {"issuer": ours.subject_text + ",OU=x"},
    ):
        rule = CertificateMatch(subject="CN=alice,O=Sentinel", **issuer)
        assert not alice.matches(rule, cas.issuers_of(alice.der)), issuer
    # a subjectAltName: the same DNS name from both CAs
    mine, forged = (
        pki.ca.issue_client("rover", dns=["rover.lan"]),
        pki.other_ca.issue_client("rover", dns=["rover.lan"]),
    )
    rule = CertificateMatch(san="DNS:rover.lan", issuer_sha256=ours.sha256)
    for issued, expected in ((mine, True), (forged, False)):
        peer = from_pem(issued.cert.read_text())
        assert peer.matches(rule, cas.issuers_of(peer.der)) is expected
    # what signed a certificate is read from its signature, not its issuer field
    fake = impostor_of(pki.ca, tmp_path / "impostor")
    owner = from_pem(fake.issue_client("owner").cert.read_text())
    with_fake = TrustedCAs.from_file(bundle(tmp_path, pki.ca, fake))
    assert [c.sha256 for c in with_fake.issuers_of(owner.der)] == [ca_of(fake).sha256]
    assert not owner.matches(
        CertificateMatch(subject="CN=owner,O=Sentinel", issuer_sha256=ours.sha256),
        with_fake.issuers_of(owner.der),
    )
    assert with_fake.issuers_of(b"not a certificate") == ()


def test_issuer_spellings_are_checked():
    for bad in (
        {"subject": "CN=a", "issuer": "not a name"},
        {"subject": "CN=a", "issuer": ""},
        {"subject": "CN=a", "issuer_sha256": "zz" * 32},
        {"subject": "CN=a", "issuer_sha256": "ab" * 31},
        {"subject": "CN=a", "issuer_sha256": 5},
        {"issuer": "CN=x"},  # an issuer alone names no certificate
        {"issuer_sha256": "ab" * 32},
        {"subject": "CN=a", "issuers": "CN=x"},
    ):
        with pytest.raises(ValueError):
            CertificateMatch(**bad)


def test_with_several_cas_a_name_rule_without_issuer_is_refused_at_start(tmp_path, pki):
    two = bundle(tmp_path, pki.ca, pki.other_ca)
    owner_by_subject = {"subject": "CN=owner,O=Sentinel"}
    with pytest.raises(ConfigError, match=r"sentinel\.http\.tls\.owner .*2 CAs.*issuer"):
        http_auth_for(config(tmp_path, pki, two, owner_by_subject, []))
    rover = [{"name": "rover", "certificate": {"san": "DNS:rover.lan"}}]
    with pytest.raises(ConfigError, match="principal 'rover'.*issuer_sha256"):
        http_auth_for(config(tmp_path, pki, two, None, rover))
    # the same CA twice in the bundle is one CA
    http_auth_for(config(tmp_path, pki, bundle(tmp_path, pki.ca, pki.ca), owner_by_subject, rover))
    # an issuer the bundle does not hold, or a name two of its CAs share, is refused too
    with pytest.raises(ConfigError, match="no CA of the bundle"):
        http_auth_for(config(tmp_path, pki, two, {**owner_by_subject, "issuer": "CN=Nobody"}, []))
    fake = impostor_of(pki.ca, tmp_path / "impostor")
    same_name = bundle(tmp_path, pki.ca, fake)
    with pytest.raises(ConfigError, match="2 CAs of the bundle have that subject.*issuer_sha256"):
        http_auth_for(
            config(tmp_path, pki, same_name, {**owner_by_subject, "issuer": ca_of(pki.ca).subject_text}, [])
        )


def test_bound_rules_keep_each_ca_to_its_own_principals(tmp_path, pki):
    ours, theirs = ca_of(pki.ca), ca_of(pki.other_ca)
    fake = impostor_of(pki.ca, tmp_path / "impostor")
    three = bundle(tmp_path, pki.ca, pki.other_ca, fake)
    owner = pki.ca.issue_client("owner")
    cfg = config(
        tmp_path,
        pki,
        three,
        {"subject": "CN=owner,O=Sentinel", "issuer_sha256": ours.sha256},
        [
            {
                "name": "alice",
                "certificate": {"subject": "CN=alice,O=Sentinel", "issuer_sha256": ours.sha256},
            },
            {"name": "rover", "certificate": {"san": "DNS:rover.lan", "issuer": theirs.subject_text}},
            {"name": "kiosk", "certificate": {"sha256": pki.bob.sha256}},  # a pin needs no issuer
        ],
    )
    auth = http_auth_for(cfg).authenticator
    assert auth.authenticate(creds(owner)).is_owner
    assert auth.authenticate(creds(pki.alice)).name == "alice"
    assert auth.authenticate(creds(pki.bob)).name == "kiosk"
    assert auth.authenticate(creds(pki.other_ca.issue_client("rover", dns=["rover.lan"]))).name == "rover"
    for forged in (
        pki.other_ca.issue_client("owner", file_stem="forged-owner"),  # another CA's CN=owner
        fake.issue_client("owner", file_stem="forged-owner"),  # the same CA subject, another key
        pki.stranger,  # another CA's CN=alice
        fake.issue_client("alice"),
        pki.ca.issue_client("rover", dns=["rover.lan"], file_stem="rover-ours"),  # SAN from the wrong CA
        pki.other_ca.issue_client("bob", file_stem="bob-theirs"),
    ):
        with pytest.raises(AuthFailed, match="names no principal"):
            auth.authenticate(creds(forged))


def test_one_ca_configs_are_unchanged(tmp_path, pki):
    cfg = config(
        tmp_path,
        pki,
        pki.ca.ca_cert_path,
        {"subject": "CN=owner,O=Sentinel"},
        [{"name": "alice", "certificate": {"subject": "CN=alice,O=Sentinel"}}],
    )
    auth = http_auth_for(cfg).authenticator
    assert auth.authenticate(creds(pki.ca.issue_client("owner"))).is_owner
    assert auth.authenticate(creds(pki.alice)).name == "alice"
    with pytest.raises(AuthFailed, match="names no principal"):
        auth.authenticate(creds(pki.carol))


def test_a_bundle_that_grows_after_start_does_not_open_name_rules(tmp_path, pki, monkeypatch):
    """The start check ran on one CA; once a second CA is added (files are re-read without a restart), a name
    rule without an issuer matches nothing, and a bound one still works."""
    monkeypatch.setattr(server_context, "RECHECK_SECONDS", 0.0)
    ca_file = tmp_path / "clients-ca.pem"
    ca_file.write_bytes(pki.ca.ca_cert_path.read_bytes())
    contexts = ServerContexts(FrontTLS(pki.server.cert, pki.server.key, ca_file, None, "optional"))
    rules = [
        (CertificateMatch(subject="CN=alice,O=Sentinel"), Principal("alice", "certificate")),
        (
            CertificateMatch(subject="CN=bob,O=Sentinel", issuer_sha256=ca_of(pki.ca).sha256),
            Principal("bob", "certificate"),
        ),
    ]
    resolver = CertificateResolver(rules, "optional", trusted_cas=contexts.trusted_cas)
    assert resolver.resolve(creds(pki.alice)) == Principal("alice", "certificate")
    ca_file.write_bytes(pki.ca.ca_cert_path.read_bytes() + pki.other_ca.ca_cert_path.read_bytes() + b"\n")
    contexts.reload_now()
    assert contexts.trusted_cas() is not None and contexts.trusted_cas().several  # type: ignore[union-attr]
    for who in (pki.alice, pki.stranger):  # ours, and the new CA's CN=alice
        with pytest.raises(AuthFailed, match="only rules that name no issuer, and the CA bundle now holds"):
            resolver.resolve(creds(who))
    with pytest.raises(AuthFailed, match="names no principal"):  # bob's rule is ours only
        resolver.resolve(creds(pki.other_ca.issue_client("bob", file_stem="bob-theirs")))
    assert resolver.resolve(creds(pki.bob)) == Principal("bob", "certificate")


async def test_over_https_another_cas_owner_is_refused_and_the_real_one_admitted(tmp_path, pki):
    """A real Sentinel on a non-loopback binding, its ``ca`` holding our CA and a partner's: the red team's
    repro (the partner's CA issues itself CN=owner,O=Sentinel) with issuer-bound rules, and the unbound
    config refused at start."""
    import subprocess
    import sys

    import httpx2
    from tests.identity.identity_rig import write_config
    from tests.tls.tls_rig import client_context, https_sentinel

    two = bundle(tmp_path, pki.ca, pki.other_ca)
    tls = {"cert": str(pki.server.cert), "key": str(pki.server.key), "ca": str(two)}
    unbound = write_config(
        tmp_path, http={"tls": {**tls, "owner": {"subject": "CN=owner,O=Sentinel"}}}, principals=[]
    )
    out = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(unbound), "serve", "--http", "0.0.0.0:1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode != 0 and "sentinel.http.tls.owner" in out.stderr and "issuer" in out.stderr
    ours = ca_of(pki.ca)
    owner_rule = {"subject": "CN=owner,O=Sentinel", "issuer": ours.subject_text}
    alice_rule = {"subject": "CN=alice,O=Sentinel", "issuer_sha256": colon_hex(ours.sha256)}
    cfg = write_config(
        tmp_path,
        http={"tls": {**tls, "owner": owner_rule}},
        principals=[{"name": "alice", "certificate": alice_rule}],
    )
    owner = pki.ca.issue_client("owner")
    forged = pki.other_ca.issue_client("owner", file_stem="forged-owner")
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream"}
    with https_sentinel(cfg, pki) as (base, _):
        for who, expected in ((owner, None), (pki.alice, None), (forged, 401), (pki.stranger, 401)):
            async with httpx2.AsyncClient(verify=client_context(pki, who), timeout=30) as http:
                r = await http.post(f"{base}/mcp", json=ping, headers=accept)
            if expected is None:
                assert r.status_code not in (401, 403), (who.name, r.text)
            else:
                assert r.status_code == 401 and "names no principal" in r.json()["error"]["message"], r.text


@pytest.mark.parametrize("orchestrator", ["bob", None])
def test_the_orchestrators_certificate_signs_in_an_agent_as_its_token_does(tmp_path: Path, pki: Any,
                                                                          orchestrator: str | None) -> None:
    """The principal an orchestrator acts as is an agent whichever way it signs in (its client is asked
    nothing: it would answer for the user): by its certificate as by its token. Bob is both here; another
    principal, or bob when no orchestrator acts as him, is a person."""
    import json

    from tests.tls.tls_rig import BOB, tls_config

    cfg = tls_config(tmp_path, pki)
    body = json.loads(cfg.read_text())
    if orchestrator is not None:
        body["sentinel"]["a2a"]["orchestrator_principal"] = orchestrator
    config = parse_config(body, source=str(cfg), base_dir=tmp_path)
    auth = http_auth_for(config).authenticator
    by_cert, by_token = auth.authenticate(creds(pki.bob)), auth.authenticate(Credentials(bearer=BOB))
    assert by_cert.name == by_token.name == "bob"
    assert by_cert.agent is by_token.agent is (orchestrator == "bob")
    assert auth.authenticate(creds(pki.alice)).agent is False
