"""The front's HTTP/1.1 protocol (``app/http_protocol.py``) per request, two source trees alternated in one
run: a typical 2026-07-28 ``tools/call`` (head and body in one read) parsed by ``FrontHTTPProtocol`` and
answered by a trivial ASGI app on a running loop, over a transport that writes nowhere. Each child runs one
tree and prints the best of 7 repeats of 5,000 requests (us a request); rounds alternate the trees, and the
best of all rounds is printed per tree beside the load average (a busy shared machine moves every figure).

Usage: python benchmarks/harness/front_protocol_ab.py --base DIR [--tree DIR] [--rounds 6]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r'''
import asyncio, json, sys, time
import uvicorn
from uvicorn.server import ServerState
from sentinel_mcp.app.http_protocol import FrontHTTPProtocol

BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "tb__echo", "arguments": {"text": "hi"},
    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}).encode()
HEAD = ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
        "Mcp-Method: tools/call\r\nMcp-Name: tb__echo\r\nAuthorization: Bearer abcdefabcdef\r\n"
        "User-Agent: python-httpx/0.28\r\nAccept-Encoding: gzip\r\nConnection: keep-alive\r\n"
        "Content-Length: %d\r\n\r\n" % len(BODY)).encode()
REQ = HEAD + BODY

async def app(scope, receive, send):
    await receive()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"{}"})

class T:
    def __init__(self): self.closing = False
    def write(self, d): pass
    def writelines(self, d): pass
    def is_closing(self): return self.closing
    def get_extra_info(self, name, default=None):
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 5555)}.get(name, default)
    def pause_reading(self): pass
    def resume_reading(self): pass
    def close(self): self.closing = True
    def can_write_eof(self): return True
    def set_protocol(self, p): pass
    def get_protocol(self): return None

async def main():
    cfg = uvicorn.Config(app, log_level="warning", http=FrontHTTPProtocol); cfg.load()
    state = ServerState()
    p = FrontHTTPProtocol(config=cfg, server_state=state, app_state={})
    p.connection_made(T())
    n = 5000
    best = 1e9
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(n):
            p.data_received(REQ)
            await asyncio.sleep(0)
            await asyncio.sleep(0)
        best = min(best, (time.perf_counter() - t) / n * 1e6)
    print(json.dumps({"us": best}))
asyncio.run(main())
'''


def run(tree: Path) -> float:
    # cwd: ``python -c`` puts the working directory ahead of PYTHONPATH (else the caller's tree is measured)
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tree, check=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1])["us"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True, type=Path)
    parser.add_argument("--tree", default=ROOT, type=Path)
    parser.add_argument("--rounds", default=6, type=int)
    args = parser.parse_args()
    before = os.getloadavg()[0]
    best = {"base": float("inf"), "this": float("inf")}
    for _ in range(args.rounds):
        best["base"] = min(best["base"], run(args.base))
        best["this"] = min(best["this"], run(args.tree))
    print(f"front protocol, a request parsed and answered (best of {args.rounds} rounds, us); load average "
          f"{before:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"base {best['base']:.1f}   this {best['this']:.1f}   change {best['this'] - best['base']:+.1f} us "
          "(goal: within the added-latency budget of 0.5 ms a call, i.e. a few us here)")


if __name__ == "__main__":
    main()
