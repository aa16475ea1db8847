"""What TLS and mutual TLS cost on Sentinel's HTTP front, side by side with plaintext and with uvicorn's own
TLS:
a request on a kept-alive connection, a new connection (TCP + handshake + request), a 1 MB response, a refused
certificate, and the per-request certificate -> principal step. Client and server share one event loop on
127.0.0.1 (so each figure holds both sides' work). Prints one table, each row with its goal.
Usage: python benchmarks/tls_overhead.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import socket
import ssl
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402
import uvicorn  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse, Response  # noqa: E402
from starlette.routing import Route  # noqa: E402

from sentinel_mcp.app.http_app import CallerGuard  # noqa: E402
from sentinel_mcp.identity.certificates import CertificateResolver  # noqa: E402
from sentinel_mcp.identity.credentials import Credentials  # noqa: E402
from sentinel_mcp.identity.principal import Principal  # noqa: E402
from sentinel_mcp.identity.resolver import SCOPE_KEY, Authenticator, TokenResolver  # noqa: E402
from sentinel_mcp.tls.acceptor import TLSAcceptor  # noqa: E402
from sentinel_mcp.tls.authority import LocalCA  # noqa: E402
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts  # noqa: E402
from sentinel_mcp.tls.settings import CertificateMatch  # noqa: E402

TOKEN = "bench-token-0123456789abcdef"
MEGABYTE = b"x" * (1 << 20)


async def whoami(request: Request) -> JSONResponse:
    return JSONResponse({"principal": request.scope[SCOPE_KEY].name})


async def big(request: Request) -> Response:
    return Response(MEGABYTE, media_type="application/octet-stream")


def app_for(resolvers: list[Any]) -> Starlette:
    app = Starlette(routes=[Route("/who", whoami), Route("/big", big)])
    app.add_middleware(CallerGuard, bind_host="127.0.0.1", port=0, auth=Authenticator(resolvers))
    return app


@contextlib.asynccontextmanager
async def served(app: Starlette, **options: Any):  # type: ignore[no-untyped-def]
    sock = socket.socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="critical", lifespan="off", **options))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await task
        sock.close()


async def timed(fn: Any, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        await fn()
        out.append((time.perf_counter() - t) * 1e3)
    return out


async def measure(runs: int) -> list[tuple[str, list[float], float]]:
    rows: list[tuple[str, list[float], float]] = []
    with tempfile.TemporaryDirectory() as d:
        ca = LocalCA(Path(d) / "ca")
        ca.create()
        server = ca.issue_server(["localhost"], ["127.0.0.1"])
        alice = ca.issue_client("alice")
        old = ca.issue_client(
            "old", days=1, not_before=dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=2)
        )
        tokens = TokenResolver()
        tokens.add(Principal("bob", "token"), token=TOKEN)
        front = FrontTLS(server.cert, server.key, ca.ca_cert_path, ca.crl_path, "optional")
        contexts = ServerContexts(front)
        issuer = contexts.trusted_cas().cas[0].subject_text  # type: ignore[union-attr]
        alice_rule = CertificateMatch(subject="CN=alice,O=Sentinel", issuer=issuer)
        rules = [(alice_rule, Principal("alice", "certificate"))]
        # as serve_http wires it: the rule bound to its CA, the bundle as the front has it now
        certs = CertificateResolver(rules, "optional", tokens, trusted_cas=contexts.trusted_cas)
        app = app_for([certs, tokens])
        trust = ssl.create_default_context(cafile=str(ca.ca_cert_path))
        mine = ssl.create_default_context(cafile=str(ca.ca_cert_path))
        mine.load_cert_chain(str(alice.cert), str(alice.key))
        expired = ssl.create_default_context(cafile=str(ca.ca_cert_path))
        expired.load_cert_chain(str(old.cert), str(old.key))
        bearer = {"Authorization": f"Bearer {TOKEN}"}

        async def keepalive(
            port: int, scheme: str, verify: Any, label: str, goal: float, headers: Any = None
        ) -> None:
            async with httpx2.AsyncClient(verify=verify, headers=headers) as http:
                url = f"{scheme}://127.0.0.1:{port}/who"
                await http.get(url)
                rows.append((label, await timed(lambda: http.get(url), runs), goal))

        async def fresh(
            port: int, scheme: str, verify: Any, label: str, goal: float, headers: Any = None
        ) -> None:
            async def one() -> None:
                async with httpx2.AsyncClient(verify=verify, headers=headers) as http:
                    r = await http.get(f"{scheme}://127.0.0.1:{port}/who")
                    assert r.status_code == 200, r.text

            rows.append((label, await timed(one, max(runs // 5, 20)), goal))

        async def megabyte(
            port: int, scheme: str, verify: Any, label: str, goal: float, headers: Any = None
        ) -> None:
            async with httpx2.AsyncClient(verify=verify, headers=headers) as http:
                url = f"{scheme}://127.0.0.1:{port}/big"
                await http.get(url)
                rows.append((label, await timed(lambda: http.get(url), max(runs // 20, 10)), goal))

        async with served(app) as plain:  # (a ready context: building one per client costs ~100 ms)
            await keepalive(plain, "http", trust, "plaintext, kept-alive connection (token)", 3, bearer)
            await fresh(plain, "http", trust, "plaintext, new connection (token)", 15, bearer)
            await megabyte(plain, "http", trust, "plaintext, 1 MB response", 30, bearer)
        async with served(app, ssl_certfile=str(server.cert), ssl_keyfile=str(server.key)) as builtin:
            await keepalive(builtin, "https", trust, "uvicorn's own TLS, kept-alive (token)", 3, bearer)
            await fresh(builtin, "https", trust, "uvicorn's own TLS, new connection (token)", 30, bearer)
        async with served(app, **TLSAcceptor(contexts).uvicorn_options()) as tls:
            await keepalive(tls, "https", trust, "Sentinel TLS, kept-alive (token)", 3, bearer)
            await keepalive(tls, "https", mine, "Sentinel mTLS, kept-alive (certificate)", 3)
            await fresh(tls, "https", trust, "Sentinel TLS, new connection (token)", 30, bearer)
            await fresh(tls, "https", mine, "Sentinel mTLS, new connection (certificate)", 35)
            await megabyte(tls, "https", mine, "Sentinel mTLS, 1 MB response", 40)

            async def refused() -> None:
                async with httpx2.AsyncClient(verify=expired) as http:
                    with contextlib.suppress(httpx2.HTTPError, ssl.SSLError):
                        await http.get(f"https://127.0.0.1:{tls}/who")

            rows.append(
                ("expired certificate refused (with its alert)", await timed(refused, max(runs // 5, 20)), 35)
            )

        pem = alice.cert.read_text()
        creds = Credentials(tls={"client_cert_chain": [pem]})
        certs.resolve(creds)
        samples = []
        for _ in range(runs):
            t = time.perf_counter()
            certs.resolve(creds)
            samples.append((time.perf_counter() - t) * 1e3)
        rows.append(("certificate -> principal, per request (cached parse)", samples, 0.05))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=300)
    args = ap.parse_args()
    rows = asyncio.run(measure(args.runs))
    w = max(len(r[0]) for r in rows)
    print(
        f"\nTLS on the front ({args.runs} runs for kept-alive requests, fewer for the others; milliseconds)"
    )
    print(f"{'case':{w}}  {'p50 ms':>8}  {'p99 ms':>8}  {'goal p50':>8}  ok")
    for name, samples, goal in rows:
        p50 = statistics.median(samples)
        p99 = sorted(samples)[max(int(len(samples) * 0.99) - 1, 0)]
        print(f"{name:{w}}  {p50:>8.3f}  {p99:>8.3f}  {goal:>8.2f}  {'yes' if p50 <= goal else 'NO'}")


if __name__ == "__main__":
    main()
