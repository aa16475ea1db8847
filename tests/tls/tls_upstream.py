"""An MCP server over HTTPS (uvicorn's own TLS: the other party, not Sentinel's code), for Sentinel as a
client.

Usage: python tls_upstream.py PORT CERT KEY [--client-ca CA] [--sse] [--log FILE]
With --client-ca it requires a client certificate; --log appends one line per request (method, path, the
X-Probe header), so a test can show that a refused server never saw a request.
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import argparse
import ssl

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

mcp = MCPServer("secure", version="1.0")


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Echo text back."""
    return f"secure echo: {text}"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("port", type=int)
    p.add_argument("cert")
    p.add_argument("key")
    p.add_argument("--client-ca")
    p.add_argument("--sse", action="store_true")
    p.add_argument("--log")
    args = p.parse_args()
    app = mcp.sse_app() if args.sse else mcp.streamable_http_app()

    async def logged(scope, receive, send):  # type: ignore[no-untyped-def]
        if args.log and scope["type"] == "http":
            probe = dict(scope["headers"]).get(b"x-probe", b"-").decode()
            with open(args.log, "a") as fh:
                fh.write(f"{scope['method']} {scope['path']} {probe}\n")
        await app(scope, receive, send)

    tls = {"ssl_certfile": args.cert, "ssl_keyfile": args.key}
    if args.client_ca:
        tls.update(ssl_ca_certs=args.client_ca, ssl_cert_reqs=ssl.CERT_REQUIRED)
    uvicorn.run(logged, host="127.0.0.1", port=args.port, log_level="warning", lifespan="on", **tls)


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    main()
