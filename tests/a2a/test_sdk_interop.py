"""The official a2a-sdk client against Sentinel's server, and Sentinel's peer client against an a2a-sdk
server,
in plaintext and over TLS with client certificates.

a2a-sdk (import name ``a2a``; Sentinel's own A2A code is ``sentinel_mcp.a2a``) and its dependencies stay out
of
the project venv: it runs in a venv of its own, made by ``make test`` (``.venv-a2a-sdk``); ``A2A_SDK_PYTHON``
may
name another interpreter. Without one these tests fail (they must run in CI, not skip)::

    python -m venv .venv-a2a-sdk && .venv-a2a-sdk/bin/pip install 'a2a-sdk[http-server,signing]' \
        'pyjwt[crypto]==2.15.1' httpx uvicorn
"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import httpx2
import pytest
from tests.a2a.a2a_rig import open_port, serve
from tests.conftest import free_port

from sentinel_mcp.a2a.discovery import PeerRejected, txt_record, verify_peer
from sentinel_mcp.a2a.peer_client import PeerError, build_message, send_message
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.identity.certificates import CertificateResolver
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import Authenticator
from sentinel_mcp.tls.authority import LocalCA
from sentinel_mcp.tls.client_context import httpx_verify
from sentinel_mcp.tls.server_context import FrontTLS
from sentinel_mcp.tls.settings import CertificateMatch, ClientTLS

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).parent / "interop" / "sdk_client.py"
pytestmark = pytest.mark.timeout(120)


def sdk_python() -> str:
    configured = os.environ.get("A2A_SDK_PYTHON") or str(ROOT / ".venv-a2a-sdk" / "bin" / "python")
    if not Path(configured).exists():
        pytest.fail(
            f"no a2a-sdk interpreter at {configured}: run `make setup-interop` (part of `make test`) or set "
            "A2A_SDK_PYTHON"
        )
    return configured


async def run_sdk_client(*args: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        sdk_python(),
        str(SCRIPT),
        *args,
        cwd="/",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode == 0, (out + err).decode()[-3000:]
    assert b"a2a-sdk interop: ok" in out


async def test_a2a_sdk_client_drives_sentinel():
    async with open_port() as port, serve(port, A2ASettings()) as srv:
        await run_sdk_client(srv.base_url)


async def test_a2a_sdk_client_drives_sentinel_over_mutual_tls(tmp_path):
    """The SDK's client (HTTP and its SSE streaming) over TLS, known to Sentinel by its client certificate."""
    ca = LocalCA(tmp_path / "ca")
    ca.create()
    server = ca.issue_server(["localhost"], ["127.0.0.1"])
    peer = ca.issue_client("sdk-peer")
    rules = [(CertificateMatch(subject="CN=sdk-peer,O=Sentinel"), Principal("sdk-peer", "certificate"))]
    auth = Authenticator([CertificateResolver(rules, mode="required")])
    tls = FrontTLS(server.cert, server.key, ca.ca_cert_path, None, "required")
    async with open_port() as port, serve(port, A2ASettings(), tls=tls, auth=auth) as srv:
        assert srv.base_url.startswith("https://")
        await run_sdk_client(srv.base_url, str(ca.ca_cert_path), str(peer.cert), str(peer.key))
        assert port.calls and {c.client for c in port.calls} == {"sdk-peer"}  # the certificate's principal


async def start_sdk_server(*args: str, env: dict[str, str] | None = None
                           ) -> tuple[asyncio.subprocess.Process, int]:
    """``env``: more environment for the server (``SDK_AGENT_NAME``, ``SDK_BARE_CARD``: ``sdk_server.py``)."""
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sdk_python(),
        str(SCRIPT.with_name("sdk_server.py")),
        str(port),
        *args,
        cwd="/",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    for _ in range(300):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, port
        await asyncio.sleep(0.1)
    proc.terminate()
    raise TimeoutError("the a2a-sdk server did not start")


async def test_sentinel_verifies_and_calls_an_a2a_sdk_agent():
    proc, free = await start_sdk_server()
    try:
        async with httpx2.AsyncClient(timeout=5) as http:
            peer = await verify_peer("sdk", ["127.0.0.1"], free, txt_record(A2ASettings()), http,
                                     allow_loopback_plaintext=True)
        assert peer.card.name == "sdk-reference-agent"
        reply = await send_message(
            peer.rpc_url, build_message(data={"type": "sensor_request", "sensor": "x"})
        )
        task = reply["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["artifacts"][0]["parts"][0]["text"] == "sdk agent got 1 part(s)"
    finally:
        proc.terminate()
        await proc.wait()


async def test_sentinel_calls_an_a2a_sdk_agent_over_mutual_tls_and_refuses_a_wrong_one(tmp_path):
    """Sentinel's peer client verifies the SDK agent's certificate (CA, name, pin) and shows its own."""
    ca = LocalCA(tmp_path / "ca")
    ca.create()
    server = ca.issue_server(["localhost"], ["127.0.0.1"])
    me = ca.issue_client("sentinel-a")
    proc, free = await start_sdk_server(str(server.cert), str(server.key), str(ca.ca_cert_path))
    good = ClientTLS(ca=str(ca.ca_cert_path), cert=str(me.cert), key=str(me.key), pin_sha256=[server.sha256])
    try:
        async with httpx2.AsyncClient(timeout=5, verify=httpx_verify(good)) as http:
            peer = await verify_peer(
                "sdk", ["127.0.0.1"], free, {**txt_record(A2ASettings()), "tls": "1"}, http
            )
        assert peer.rpc_url.startswith("https://")
        reply = await send_message(peer.rpc_url, build_message(text="over mutual TLS"), tls=good)
        assert reply["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        # no client certificate: the SDK server refuses; a wrong pin or another CA: Sentinel refuses the
        # server
        for bad, why in (
            (ClientTLS(ca=str(ca.ca_cert_path)), "unreachable"),
            (good.model_copy(update={"pin_sha256": ["00" * 32]}), "pin mismatch"),
            (ClientTLS(cert=str(me.cert), key=str(me.key)), "certificate verify failed"),
        ):
            with pytest.raises(PeerError, match=why):
                await send_message(peer.rpc_url, build_message(text="hello?"), tls=bad)
        async with httpx2.AsyncClient(
            timeout=5, verify=httpx_verify(ClientTLS(cert=str(me.cert), key=str(me.key)))
        ) as untrusting:
            with pytest.raises(PeerRejected, match="certificate verify failed"):
                await verify_peer("sdk", ["127.0.0.1"], free, {"tls": "1"}, untrusting)
    finally:
        proc.terminate()
        await proc.wait()
