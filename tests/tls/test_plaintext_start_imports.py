"""Cold start over HTTP (issue 21): a front that serves plaintext (loopback, the embedded default) answers its
first tools/list without the front's certificate code (``cryptography.x509`` and the TLS server context,
~0.1-0.2 s of CPU); a front with TLS on still loads it and serves TLS (the rows of test_deployment.py).
The client side's TLS error is one class wherever it is imported from, so an upstream's or a peer's refused
TLS file is caught as before."""

from __future__ import annotations

import json
from pathlib import Path

from tests.console.test_console_start_imports import DRIVER, _served

CERTIFICATE_CODE = ("cryptography.x509", "sentinel_mcp.tls.server_context", "sentinel_mcp.tls.authority",
                    "sentinel_mcp.tls.acceptor", "sentinel_mcp.tls.crl_freshness",
                    "sentinel_mcp.tls.trusted_cas")


def test_a_plaintext_front_answers_its_first_tools_list_without_the_certificate_code(tmp_path: Path) -> None:
    result = _served(tmp_path)
    modules = set(result["modules"])
    assert "sentinel_mcp.tls.front" in modules and "sentinel_mcp.a2a.app" in modules  # the front, A2A mounted
    assert [m for m in CERTIFICATE_CODE if m in modules] == []
    assert result["tools"] > 10


def test_a_front_told_tls_off_starts_without_it_too(tmp_path: Path) -> None:
    """The other plaintext spelling: "tls": "off" said in the config (on loopback: no warning, same front)."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"mcpServers": {}, "sentinel": {"http": {"tls": "off"}}}))
    driver = DRIVER.replace('main(["serve",', f'main(["--config", {str(config)!r}, "serve",')
    assert driver != DRIVER
    modules = set(_served(tmp_path, driver)["modules"])
    assert "sentinel_mcp.tls.front" in modules
    assert [m for m in CERTIFICATE_CODE if m in modules] == []


def test_the_tls_setup_error_is_one_class_wherever_it_is_imported_from() -> None:
    from sentinel_mcp.a2a import app, mcp_tools, peer_client
    from sentinel_mcp.tls import client_context, server_context
    from sentinel_mcp.tls.setup_error import TLSSetupError

    for module in (app, mcp_tools, peer_client, client_context, server_context):
        assert module.TLSSetupError is TLSSetupError
    assert issubclass(TLSSetupError, ValueError)
