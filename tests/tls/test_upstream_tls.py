"""Sentinel as a TLS client of its upstream MCP servers (real servers over HTTPS in subprocesses): it verifies
the server (configured CA, or the system's store), its name and an optional pin, and presents its own client
certificate; a server that fails any check never receives a request, and the reason is the upstream's error.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from tests.identity.identity_rig import stop_process
from tests.conftest import free_port

from sentinel_mcp.config import ConfigError, parse_config
from sentinel_mcp.app.runtime import running_gateway

UPSTREAM = Path(__file__).with_name("tls_upstream.py")
pytestmark = pytest.mark.timeout(180)


@contextlib.contextmanager
def upstreams(*specs: list[str]) -> Iterator[list[int]]:
    """Start each ``tls_upstream.py`` (args after the port) and wait until each accepts connections."""
    procs, ports = [], []
    try:
        for args in specs:
            port = free_port()
            procs.append(
                subprocess.Popen(
                    [sys.executable, str(UPSTREAM), str(port), *args],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            ports.append(port)
        deadline = time.monotonic() + 60
        for port, proc in zip(ports, procs):
            while True:
                assert proc.poll() is None, "an HTTPS upstream died at start"
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                assert time.monotonic() < deadline, "an HTTPS upstream did not start"
                time.sleep(0.05)
        yield ports
    finally:
        for proc in procs:  # all at once: each may take a while to end its open streams
            proc.terminate()
        for proc in procs:
            stop_process(proc, timeout=5)


async def test_sentinel_verifies_its_upstreams_and_shows_its_certificate(tmp_path, pki):
    ca = pki.ca
    wrong_name_cert, wrong_name_key = ca.sign(
        "elsewhere.example", client=False, server=True, dns=["elsewhere.example"]
    )
    from cryptography.hazmat.primitives import serialization

    wn_cert, wn_key = tmp_path / "wn.pem", tmp_path / "wn-key.pem"
    wn_cert.write_bytes(wrong_name_cert.public_bytes(serialization.Encoding.PEM))
    wn_key.write_bytes(
        wrong_name_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    stranger_server = pki.other_ca.issue_server(["localhost"], ["127.0.0.1"])
    log = tmp_path / "requests.log"
    me = ca.issue_client("sentinel-gw")
    srv = [str(pki.server.cert), str(pki.server.key)]
    with upstreams(
        [*srv, "--client-ca", str(ca.ca_cert_path), "--log", str(log)],
        [*srv, "--sse"],
        [str(stranger_server.cert), str(stranger_server.key)],
        [str(wn_cert), str(wn_key)],
    ) as (mtls, sse, stranger, wrong_name):
        trust = {"ca": str(ca.ca_cert_path)}
        mine = {**trust, "cert": str(me.cert), "key": str(me.key)}

        def up(port: int, probe: str, tls: Any = None, path: str = "/mcp") -> dict[str, Any]:
            spec: dict[str, Any] = {
                "url": f"https://127.0.0.1:{port}{path}",
                "headers": {"X-Probe": probe},
                "connect_timeout": 5,
            }
            if tls is not None:
                spec["tls"] = tls
            return spec

        servers = {
            "good": up(mtls, "good", mine),
            "pinned": up(mtls, "pinned", {**mine, "pin_sha256": pki.server.sha256.upper()}),
            "sse": up(sse, "sse", trust, "/sse"),
            "wrongpin": up(mtls, "wrongpin", {**mine, "pin_sha256": ["ab" * 32]}),
            "nocert": up(mtls, "nocert", trust),
            "system": up(mtls, "system"),
            "stranger": up(stranger, "stranger", mine),
            "wrongname": up(wrong_name, "wrongname", mine),
            "nofile": up(mtls, "nofile", {"ca": str(tmp_path / "missing.pem")}),
        }
        config = parse_config(
            {"mcpServers": servers, "sentinel": {"data_dir": str(tmp_path / "state")}}, base_dir=tmp_path
        )
        t0 = time.monotonic()
        async with running_gateway(config, startup_wait=2) as rt:
            print("started", time.monotonic() - t0)
            ups = rt.manager.upstreams
            for _ in range(100):
                if all(ups[n].state == "ready" for n in ("good", "pinned", "sse")) and all(
                    ups[n].last_error for n in servers if n not in ("good", "pinned", "sse")
                ):
                    break
                await asyncio.sleep(0.1)
            errors = {n: u.last_error or "" for n, u in ups.items()}
            assert {n for n, u in ups.items() if u.state == "ready"} == {"good", "pinned", "sse"}, errors
            for name in ("good", "pinned", "sse"):
                result = await rt.gateway.invoke(
                    f"{name}__echo", {"text": name}, session_id="t", origin="client"
                )
                assert getattr(result, "result", None) is not None, result
                assert result.result.content[0].text == f"secure echo: {name}"
            assert "pin mismatch" in errors["wrongpin"] and pki.server.sha256 in errors["wrongpin"]
            assert (
                "CERTIFICATE_VERIFY_FAILED" in errors["system"]
                or "certificate verify failed" in errors["system"]
            )
            assert "certificate verify failed" in errors["stranger"]
            assert "mismatch" in errors["wrongname"]  # the certificate names another host
            # (uvicorn, the upstream here, drops its alert: Sentinel's own front sends it, see test_front)
            assert errors["nocert"] and ups["nocert"].state != "ready"
            assert "missing.pem" in errors["nofile"]
            print("checked", time.monotonic() - t0)
        print("stopped", time.monotonic() - t0)
        seen = log.read_text()
        assert " good" in seen and " pinned" in seen
        for refused in ("wrongpin", "system", "nocert"):
            assert f" {refused}" not in seen, seen  # no request (no header, no token) reached the server


def test_plaintext_upstreams_beyond_loopback_are_refused_unless_said():
    for url in ("http://192.0.2.10:9000/mcp", "http://files.lan/mcp", "http://[2001:db8::1]/mcp"):
        with pytest.raises(ConfigError, match="plaintext beyond loopback"):
            parse_config({"mcpServers": {"x": {"url": url}}})
        assert parse_config({"mcpServers": {"x": {"url": url, "tls": "off"}}}).mcp_servers["x"].tls == "off"
    for url in (
        "http://127.0.0.1:9/mcp",
        "http://localhost:9/mcp",
        "http://[::1]:9/mcp",
        "http://127.8.9.1/mcp",
    ):
        parse_config({"mcpServers": {"x": {"url": url}}})
    with pytest.raises(ConfigError, match="always verified"):
        parse_config({"mcpServers": {"x": {"url": "https://h/mcp", "tls": "off"}}})
    with pytest.raises(ConfigError, match="need an https:// url"):
        parse_config({"mcpServers": {"x": {"url": "http://127.0.0.1:9/mcp", "tls": {"ca": "ca.pem"}}}})
    with pytest.raises(ConfigError, match="not a SHA-256 fingerprint"):
        parse_config({"mcpServers": {"x": {"url": "https://h/mcp", "tls": {"pin_sha256": "abc"}}}})
