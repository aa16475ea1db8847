"""A small deployment, as a user does it: `sentinel-mcp tls init`, paste the lines it prints, `tls issue
NAME`,
serve on this machine's own address, call it with the certificate, `tls revoke NAME`. And the rule behind it:
no plaintext beyond loopback unless the config says so (and then /healthz says so)."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from tests.identity.identity_rig import (
    OWNER_TOKEN,
    free_port,
    session_line,
    stop_process,
    text,
    wait_http,
    write_config,
)
from tests.tls.tls_rig import mcp_over_tls, wait_https

from sentinel_mcp.config import ConfigError, parse_config
from sentinel_mcp.tls.authority import machine_addresses
from sentinel_mcp.tls.front import front_security

pytestmark = pytest.mark.timeout(240)


def lan_address() -> str | None:
    return next((a for a in machine_addresses() if "." in a and not a.startswith("127.")), None)


def cli(cfg: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "SENTINEL_DATA_DIR": str(cfg.parent / "state")},
    )


def serve(cfg: Path, listen: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", listen],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, "SENTINEL_DATA_DIR": str(cfg.parent / "state")},
    )


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "lan"])
def test_plaintext_beyond_loopback_refuses_to_start(tmp_path, host):
    host = lan_address() if host == "lan" else host
    if host is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    cfg = write_config(tmp_path)
    listen = f"[{host}]:{free_port()}" if ":" in host else f"{host}:{free_port()}"
    p = cli(cfg, "serve", "--http", listen)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert (
        "refusing to serve" in p.stderr and "in plaintext" in p.stderr and "sentinel-mcp tls init" in p.stderr
    )


def test_plaintext_said_explicitly_serves_and_healthz_says_so(tmp_path):
    lan = lan_address()
    if lan is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    cfg = write_config(tmp_path, http={"tls": "off", "token": OWNER_TOKEN})
    port = free_port()
    proc = serve(cfg, f"{lan}:{port}")
    try:
        wait_http(f"http://{lan}:{port}/healthz", proc=proc, timeout=60)
        # the operator sees the details (another principal and an anonymous probe get the status word only)
        health = httpx2.get(
            f"http://{lan}:{port}/healthz", timeout=10, headers={"Authorization": f"Bearer {OWNER_TOKEN}"}
        ).json()
        assert health["tls"] == "off" and any("plaintext beyond loopback" in p for p in health["problems"])
    finally:
        stop_process(proc)


async def test_the_small_deployment_flow(tmp_path):
    lan = lan_address() or "127.0.0.1"
    cfg = write_config(tmp_path, principals=[])
    init = cli(cfg, "tls", "init")
    assert init.returncode == 0, init.stderr
    state = tmp_path / "state" / "tls"
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    for key in ("ca-key.pem", "server-key.pem"):
        assert stat.S_IMODE((state / key).stat().st_mode) == 0o600
    http_line = next(line for line in init.stdout.splitlines() if line.strip().startswith('"http":'))
    http = json.loads("{" + http_line.strip() + "}")["http"]
    assert http["tls"]["client_certificates"] == "optional" and Path(http["tls"]["ca"]).is_file()
    again = cli(cfg, "tls", "init")  # idempotent: the CA and the certificate are kept
    assert again.returncode == 0 and "already there" in again.stdout and "kept" in again.stdout

    issue = cli(cfg, "tls", "issue", "alice")
    assert issue.returncode == 0, issue.stderr
    principal = json.loads(
        next(
            line.strip() for line in issue.stdout.splitlines() if line.strip().startswith('{"name": "alice"')
        )
    )
    files = json.loads(
        re.search(r'"tls": (\{.*?\})\}', issue.stdout).group(1)
    )  # the lines for a client Sentinel
    assert stat.S_IMODE(Path(files["key"]).stat().st_mode) == 0o600
    for bad in ("anonymous", "../escape"):
        refused = cli(cfg, "tls", "issue", bad)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr

    # the user pastes the printed lines into the config and serves on this machine's own address
    body = json.loads(cfg.read_text())
    body["sentinel"]["http"] = {k: v for k, v in http.items() if k != "port"}
    body["sentinel"]["principals"] = [principal]
    cfg.write_text(json.dumps(body))
    port = free_port()
    proc = serve(cfg, f"{lan}:{port}")
    import ssl

    ctx = ssl.create_default_context(
        cafile=files["ca"]
    )  # the server certificate names this machine's address
    ctx.load_cert_chain(files["cert"], files["key"])
    base = f"https://{lan}:{port}"
    try:
        wait_https(f"{base}/healthz", ctx, proc)
        async with mcp_over_tls(base, ctx, "auto") as alice:
            facts = await alice.call_tool("sentinel__sentinel_facts", {})
            assert session_line(facts).startswith("alice/"), text(facts)
        # the CLI's own client over TLS: the local CA trusted by default, alice's certificate presented
        called = cli(
            cfg,
            "call",
            "sentinel__sentinel_facts",
            "{}",
            "--url",
            f"{base}/mcp",
            "--cert",
            files["cert"],
            "--key",
            files["key"],
        )
        assert called.returncode == 0 and "Session alice/" in called.stdout, called.stdout + called.stderr
        revoke = cli(cfg, "tls", "revoke", "alice")
        assert revoke.returncode == 0 and "revoked alice" in revoke.stdout
        import asyncio

        await asyncio.sleep(1.1)  # the front looks at its files at most once a second
        async with httpx2.AsyncClient(verify=ctx, timeout=10) as http_client:
            with pytest.raises((httpx2.HTTPError, ssl.SSLError), match="(?i)revoked"):
                await http_client.get(f"{base}/healthz")
        listed = cli(cfg, "tls", "list")
        assert re.search(r"alice\s+serial \w+\s+revoked", listed.stdout), listed.stdout
    finally:
        stop_process(proc)


def test_bad_tls_files_are_clear_errors(tmp_path, pki):
    cases = [
        ({"cert": str(pki.server.cert), "key": str(pki.alice.key)}, "do not load together"),
        ({"cert": str(pki.server.cert), "key": str(pki.server.key), "ca": str(pki.server.key)}, "client CA"),
        (
            {
                "cert": str(pki.server.cert),
                "key": str(pki.server.key),
                "ca": str(pki.other_ca.ca_cert_path),
                "crl": str(pki.ca.crl_path),
            },
            "not signed by a CA",
        ),
        (
            {
                "cert": str(pki.server.cert),
                "key": str(pki.server.key),
                "ca": str(pki.ca.ca_cert_path),
                "crl": str(pki.ca.ca_cert_path),
            },
            "not a PEM CRL",
        ),
        (
            {"cert": str(pki.server.cert), "key": str(pki.server.key), "client_certificates": "required"},
            "needs 'ca'",
        ),
        (
            {"cert": str(pki.server.cert), "key": str(pki.server.key), "crl": str(pki.ca.crl_path)},
            "'crl' needs 'ca'",
        ),
    ]
    for tls, expected in cases:
        with pytest.raises(ConfigError, match=re.escape(expected)):
            front_security(parse_config({"sentinel": {"http": {"tls": tls}}}), "127.0.0.1")
    # and through the command line: a clear message, no traceback
    cfg = write_config(
        tmp_path, http={"tls": {"cert": str(tmp_path / "nope.pem"), "key": str(pki.server.key)}}
    )
    p = cli(cfg, "serve", "--http", f"127.0.0.1:{free_port()}")
    assert p.returncode == 2 and "TLS certificate file not found" in p.stderr and "Traceback" not in p.stderr


def test_the_deprecated_a2a_keys_still_switch_the_whole_front_to_tls(pki, recwarn):
    cfg = parse_config(
        {"sentinel": {"a2a": {"tls_cert": str(pki.server.cert), "tls_key": str(pki.server.key)}}}
    )
    security = front_security(cfg, "0.0.0.0")  # and so a non-loopback binding may serve
    assert security.tls is not None and security.scheme == "https" and security.uvicorn_options()
    assert any("deprecated" in str(w.message) for w in recwarn)


def test_tls_local_makes_the_ca_once_and_refuses_a_second_say(tmp_path):
    """`serve --tls-local` (the container's command): the local CA is made on first use and then kept; it is
    for --http only, and a config that names its own certificate too is refused rather than one silently won.
    """
    from sentinel_mcp.config import load_config
    from sentinel_mcp.tls.front import local_ca_tls

    cfg = write_config(tmp_path)
    first = local_ca_tls(load_config(cfg), ["sentinel.example"])
    made = Path(first.cert).read_bytes()
    from cryptography import x509

    names = x509.load_pem_x509_certificate(made).extensions.get_extension_for_class(
        x509.SubjectAlternativeName
    )
    assert "sentinel.example" in names.value.get_values_for_type(x509.DNSName)
    assert first.mode == "optional" and Path(first.crl or "").is_file()
    assert stat.S_IMODE(Path(first.key).stat().st_mode) == 0o600
    assert Path(first.cert).parent == tmp_path / "state" / "tls"
    again = local_ca_tls(load_config(cfg))
    assert Path(again.cert).read_bytes() == made  # kept, not re-issued on every start
    p = cli(cfg, "serve", "--tls-local")
    assert p.returncode == 2 and "--tls-local is for the HTTP front" in p.stderr, p.stderr
    (tmp_path / "both").mkdir()
    both = write_config(tmp_path / "both", http={"tls": {"cert": first.cert, "key": first.key}})
    p = cli(both, "serve", "--http", f"127.0.0.1:{free_port()}", "--tls-local")
    assert p.returncode == 2 and "keep one" in p.stderr and "Traceback" not in p.stderr, p.stderr
