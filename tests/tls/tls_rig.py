"""Rig for the TLS tests: a real Sentinel (subprocess) serving HTTPS with mutual TLS on a non-loopback
binding,
clients that present certificates, and the audit log read back."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import httpx2
from tests.support.carried_session import Carried
from tests.identity.identity_rig import BOB, User, console_secret, free_port, stop_process, write_config
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from sentinel_mcp.tls.authority import Issued


def subject_of(name: str) -> dict[str, str]:
    return {"subject": f"CN={name},O=Sentinel"}


def tls_config(tmp: Path, pki: Any, mode: str = "optional", **sentinel: Any) -> Path:
    """The identity tests' bookings Sentinel with TLS on the front: alice by certificate, bob by certificate
    or token (the same principal), carol's certificate mapped to nobody."""
    ca = pki.ca
    tls = {
        "cert": str(pki.server.cert),
        "key": str(pki.server.key),
        "ca": str(ca.ca_cert_path),
        "crl": str(ca.crl_path),
        "client_certificates": mode,
    }
    principals = [
        {"name": "alice", "certificate": subject_of("alice")},
        {"name": "bob", "token": BOB, "console_secret": console_secret(BOB),
         "certificate": subject_of("bob")},
    ]
    return write_config(tmp, **{"http": {"tls": tls}, "principals": principals, **sentinel})


def client_context(pki: Any, who: Issued | None = None, ca: Path | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(ca or pki.ca.ca_cert_path))
    if who is not None:
        ctx.load_cert_chain(str(who.cert), str(who.key))
    return ctx


def wait_https(url: str, ctx: ssl.SSLContext, proc: subprocess.Popen, timeout: float = 60) -> None:
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"Sentinel exited with {proc.returncode}: {proc.stderr.read().decode()[-2000:]}"
            )
        try:
            with urllib.request.urlopen(url, timeout=2, context=ctx) as r:
                if r.status < 500:
                    return
        except urllib.error.HTTPError as e:
            if e.code < 500:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"{url} did not answer within {timeout}s")


@contextlib.contextmanager
def https_sentinel(cfg: Path, pki: Any, bind: str = "0.0.0.0",
                   env: dict[str, str] | None = None) -> Iterator[tuple[str, subprocess.Popen]]:
    """Serve ``cfg`` on ``bind`` (a non-loopback binding by default), reached through 127.0.0.1; ``env``:
    more of the environment (``SENTINEL_CAP_*``)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"{bind}:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, "SENTINEL_DATA_DIR": str(cfg.parent / "state"), **(env or {})},
    )
    try:
        wait_https(f"https://127.0.0.1:{port}/healthz", client_context(pki, pki.alice), proc)
        yield f"https://127.0.0.1:{port}", proc
    finally:
        stop_process(proc)


@contextlib.asynccontextmanager
async def mcp_over_tls(
    base: str,
    ctx: ssl.SSLContext,
    mode: str,
    transport: str = "streamable-http",
    headers: dict[str, str] | None = None,
    user: User | None = None,
) -> AsyncIterator[Carried]:
    """The real MCP Python client over HTTPS, presenting whatever certificate ``ctx`` holds."""
    if transport == "sse":

        def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> httpx2.AsyncClient:
            return httpx2.AsyncClient(headers=headers, timeout=timeout or 60, auth=auth, verify=ctx)

        target: Any = sse_client(f"{base}/sse", headers=headers, httpx_client_factory=factory)
    else:
        target = streamable_http_client(
            f"{base}/mcp", http_client=httpx2.AsyncClient(headers=headers, timeout=60, verify=ctx)
        )
    async with Client(target, mode=mode, elicitation_callback=user or User()) as c:
        yield Carried(c)


async def audit_rows(
    cfg: Path, origin: str = "tls", wait: float = 10.0, at_least: int = 1
) -> list[dict[str, Any]]:
    """The audit log's rows of one origin, read with the CLI (as an operator would)."""
    deadline = time.monotonic() + wait
    rows: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "sentinel_mcp",
            "-c",
            str(cfg),
            "audit",
            "--json",
            "--tail",
            "200",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "SENTINEL_DATA_DIR": str(cfg.parent / "state")},
        )
        out, _ = await proc.communicate()
        rows = [r for r in map(json.loads, out.decode().splitlines()) if r.get("origin") == origin]
        if len(rows) >= at_least:
            return rows
        await asyncio.sleep(0.3)
    return rows


@contextlib.asynccontextmanager
async def front_in_process(tls: Any, route: Any = None) -> AsyncIterator[tuple[int, Any]]:
    """Sentinel's TLS acceptor (``tls``: a ``FrontTLS``) in front of a one-route app in this loop: (port,
    acceptor). ``GET /`` answers the client certificate's subject, or "none"; ``route(request)`` instead
    when given."""
    import socket

    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from sentinel_mcp.app.http_protocol import FrontHTTPProtocol
    from sentinel_mcp.tls.acceptor import TLSAcceptor
    from sentinel_mcp.tls.server_context import ServerContexts

    async def hello(request: Any) -> PlainTextResponse:
        tls = (request.scope.get("extensions") or {}).get("tls") or {}
        return PlainTextResponse(tls.get("client_cert_name") or "none")

    acceptor = TLSAcceptor(ServerContexts(tls))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        Starlette(routes=[Route("/", route or hello)]),
        log_level="critical",
        lifespan="off",
        **acceptor.uvicorn_options(FrontHTTPProtocol),
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield sock.getsockname()[1], acceptor
    finally:
        server.should_exit = True
        await acceptor.close()
        await task
        sock.close()
