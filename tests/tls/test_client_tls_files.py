"""Sentinel's own TLS files as a client (an upstream's or an A2A peer's ``ca``, ``cert`` and ``key``) are
refused when another account could change them, as the front's are (``tls/file_modes.py``): whoever may write
the ``ca`` a server is checked against can put their own CA there and answer for that server (a
man in the middle who reads every call and the headers' tokens); whoever may write ``cert`` and ``key`` can
make Sentinel present their certificate. Red team "tls2": these files were loaded as they were."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.tls.client_context import client_context
from sentinel_mcp.tls.server_context import TLSSetupError
from sentinel_mcp.tls.settings import ClientTLS
from tests.tls.conftest import Pki
from tests.tls.test_upstream_tls import upstreams

pytestmark = pytest.mark.timeout(180)


def _settings(pki: Pki, tmp_path: Path) -> ClientTLS:
    me = pki.ca.issue_client("sentinel-gw")
    return ClientTLS(ca=str(pki.ca.ca_cert_path), cert=str(me.cert), key=str(me.key))


@pytest.mark.parametrize("which", ["ca", "cert", "key"])
@pytest.mark.parametrize("mode", [0o666, 0o646, 0o602])
def test_a_client_file_others_may_write_is_refused_naming_it(
    pki: Pki, tmp_path: Path, which: str, mode: int
) -> None:
    tls = _settings(pki, tmp_path)
    assert client_context(tls) is not None  # as they are: taken
    path = Path(getattr(tls, which))
    os.chmod(path, mode)
    with pytest.raises(TLSSetupError, match="may be written by group or others") as e:
        client_context(tls)
    assert str(path.resolve()) in str(e.value) and "go-w" in str(e.value)


def test_a_client_file_in_a_directory_others_may_write_is_refused(pki: Pki, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    ca = shared / "ca.pem"
    ca.write_bytes(pki.ca.ca_cert_path.read_bytes())
    tls = ClientTLS(ca=str(ca))
    assert client_context(tls) is not None
    os.chmod(shared, 0o777)  # no sticky bit: anyone may put another ca.pem in its place
    with pytest.raises(TLSSetupError, match="could be replaced"):
        client_context(tls)
    os.chmod(shared, 0o1777)  # sticky (as /tmp): only the owner may replace it
    assert client_context(tls) is not None


async def test_an_upstream_whose_ca_others_may_write_gets_no_request(pki: Pki, tmp_path: Path) -> None:
    ca = tmp_path / "upstream-ca.pem"
    ca.write_bytes(pki.ca.ca_cert_path.read_bytes())
    os.chmod(ca, 0o666)
    log = tmp_path / "requests.log"
    srv = [str(pki.server.cert), str(pki.server.key)]
    with upstreams([*srv, "--log", str(log)]) as (port,):
        spec = {
            "url": f"https://127.0.0.1:{port}/mcp",
            "headers": {"X-Probe": "open-ca"},
            "connect_timeout": 5,
            "tls": {"ca": str(ca)},
        }
        config = parse_config(
            {"mcpServers": {"up": spec}, "sentinel": {"data_dir": str(tmp_path / "state")}}, base_dir=tmp_path
        )
        async with running_gateway(config, startup_wait=2) as rt:
            up = rt.manager.upstreams["up"]
            for _ in range(100):
                if up.last_error or up.state == "ready":
                    break
                await asyncio.sleep(0.1)
            assert up.state != "ready", "an upstream checked with a CA others may write was connected"
            assert "may be written by group or others" in (up.last_error or ""), up.last_error
            assert str(ca.resolve()) in (up.last_error or "")
    assert not log.exists() or " open-ca" not in log.read_text()  # not a byte of a request reached it
