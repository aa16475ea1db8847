"""The per-call pieces perf-http3 cut on the streamable-HTTP path, timed in process, a base tree and this one
alternated (issue 21, added-latency goal): ``PlainCalls.connection`` (a plain 2026-07-28 call's connection),
``CallerGuard.host_allowed`` (the Host check) and the lean upstream request's header lines and body (the
``HttpPool.request`` / ``LeanCaller.call_tool`` code, as main writes them and as this tree does). Each
child process runs one tree on a running event loop (as the gateway calls them) and prints the best of 7
repeats, us an operation; rounds alternate the trees so a change in the machine's load hits both.
Usage: python benchmarks/harness/http_front_pieces.py --base DIR [--tree DIR] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
N = 20000

CHILD = r"""
import asyncio, json, timeit
from sentinel_mcp.app.http_app import CallerGuard
from sentinel_mcp.gateway import lean_http
from sentinel_mcp.gateway.plain_calls import PlainCalls
from sentinel_mcp.identity.resolver import Authenticator, TokenResolver

N = %d
params = {"name": "noop", "arguments": {}, "_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "mcp-client", "version": "1.2.3"},
    "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True},
                                                   "elicitation": {"form": {}}},
    "sentinel/session": "s-0123456789"}}
headers = {"accept": "application/json, text/event-stream", "content-type": "application/json",
           "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "noop"}
message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "noop", "arguments": {},
           "_meta": {**params["_meta"], "progressToken": 7}}}


def lines(h):
    if hasattr(lean_http, "header_lines"):
        return lean_http.header_lines(h)
    return b"".join(lean_http._checked(k) + b": " + lean_http._checked(v) + b"\r\n" for k, v in h.items())


try:
    from sentinel_mcp.gateway.lean_upstream import _BODY as body
except ImportError:
    def body(m):
        return json.dumps(m, separators=(",", ":"), ensure_ascii=False)


async def main():
    plain = PlainCalls()
    guard = CallerGuard(None, bind_host="127.0.0.1", port=8931, auth=Authenticator([TokenResolver()]))
    out = {}
    for name, fn in (("PlainCalls.connection", lambda: plain.connection(params)),
                     ("CallerGuard.host_allowed", lambda: guard.host_allowed("127.0.0.1:8931")),
                     ("lean request: header lines", lambda: lines(headers)),
                     ("lean request: body text", lambda: body(message).encode())):
        fn()
        out[name] = min(timeit.repeat(fn, number=N, repeat=7)) / N * 1e6
    print(json.dumps(out))

asyncio.run(main())
""" % N


def run(tree: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=tree, env=env, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the tree to compare with (a worktree of main)")
    ap.add_argument("--tree", default=str(ROOT))
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    base, tree = Path(args.base).resolve(), Path(args.tree).resolve()
    got: dict[str, dict[str, list[float]]] = {"base": {}, "tree": {}}
    load0 = os.getloadavg()[0]
    for _ in range(args.rounds):
        for side, where in (("base", base), ("tree", tree)):
            for name, us in run(where).items():
                got[side].setdefault(name, []).append(us)
    print(f"us an operation, best of 7 x {N} per round, median over {args.rounds} alternated rounds "
          f"(load {load0:.1f} -> {os.getloadavg()[0]:.1f})")
    print(f"  {'piece':32s} {'base':>8s} {'tree':>8s}")
    for name in got["base"]:
        b, t = sorted(got["base"][name]), sorted(got["tree"][name])
        print(f"  {name:32s} {b[len(b) // 2]:8.2f} {t[len(t) // 2]:8.2f}")


if __name__ == "__main__":
    main()
