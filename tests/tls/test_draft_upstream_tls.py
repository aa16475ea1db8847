"""``sentinel-mcp draft`` lists an HTTPS upstream's tools as the gateway connects to it (real server over
HTTPS in a subprocess): the configured headers sent, the server verified with the configured CA, Sentinel's
client certificate presented. It connected with none of them (no header, no client certificate, the system's
store): a server requiring a client certificate could not be listed, and a configured CA was not the one
checked. A server the configured CA does not vouch for is refused before any request reaches it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.tls.test_upstream_tls import upstreams

from sentinel_mcp.cli import main

pytestmark = pytest.mark.timeout(180)


def _draft(tmp_path: Path, server: str, servers: dict[str, Any], out: str) -> int:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": servers, "sentinel": {"data_dir": str(tmp_path / "state")}}))
    policy = tmp_path / "policy.md"
    policy.write_text("# Policy\n\nEcho only what the caller wrote.\n")
    return main(["-c", str(cfg), "draft", "--server", server, "--policy", str(policy),
                 "-o", str(tmp_path / out)])


def test_draft_connects_with_the_configured_tls_and_headers(tmp_path, pki, capsys):
    log = tmp_path / "requests.log"
    me = pki.ca.issue_client("sentinel-gw")
    with upstreams(
        [str(pki.server.cert), str(pki.server.key), "--client-ca", str(pki.ca.ca_cert_path),
         "--log", str(log)],
    ) as (port,):
        url = f"https://127.0.0.1:{port}/mcp"
        mine = {"ca": str(pki.ca.ca_cert_path), "cert": str(me.cert), "key": str(me.key)}
        servers = {
            "good": {"url": url, "headers": {"X-Probe": "good"}, "tls": mine, "connect_timeout": 5},
            # the server's certificate does not chain to this CA: refused, whatever else is right
            "wrongca": {"url": url, "headers": {"X-Probe": "wrongca"}, "connect_timeout": 5,
                        "tls": {**mine, "ca": str(pki.other_ca.ca_cert_path)}},
            # no client certificate: the server refuses the handshake
            "nocert": {"url": url, "headers": {"X-Probe": "nocert"}, "connect_timeout": 5,
                       "tls": {"ca": str(pki.ca.ca_cert_path)}},
        }
        assert _draft(tmp_path, "good", servers, "good.pl") == 0, capsys.readouterr().err
        drafted = (tmp_path / "good.pl").read_text()
        assert "echo" in drafted
        capsys.readouterr()
        assert _draft(tmp_path, "wrongca", servers, "wrongca.pl") == 1
        err = capsys.readouterr().err
        assert "cannot list the tools of wrongca" in err and "certificate verify failed" in err.lower(), err
        assert _draft(tmp_path, "nocert", servers, "nocert.pl") == 1
        assert not (tmp_path / "wrongca.pl").exists() and not (tmp_path / "nocert.pl").exists()
    seen = log.read_text()
    assert " good" in seen, seen  # the configured header reached the server
    for refused in ("wrongca", "nocert"):
        assert f" {refused}" not in seen, seen  # no request (no header, no token) reached it
