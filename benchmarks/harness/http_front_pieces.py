"""The per-call pieces perf-http3 and perf-http4 cut on the streamable-HTTP path, timed in process, a base
tree and this one alternated (issue 21, added-latency goal): ``PlainCalls.connection`` (a plain 2026-07-28
call's connection), ``CallerGuard.host_allowed`` (the Host check) and the lean upstream request's header lines
and body (the ``HttpPool.request`` / ``LeanCaller.call_tool`` code, as main writes them and as this tree
does); the lean 2026 call's tool schema look-up (a catalog listed and searched, or ``catalog_tool``) and its
``Mcp-Param-*`` check on the toolbox's echo schema and on an airline-like one (``LeanCalls``: the SDK's
``validate_mcp_param_headers``, or ``ParamHeaderCheck.refusal``), and three pieces of a 2025 session's lean
call: the surface check of its params (the SDK's, or ``plain_handshake_params`` for params it is sure to
accept), its JSON answer (a Starlette ``Response``, or ``json_answer``) and the Accept rule (asked, or its
verdict kept). Each child process runs one tree on a running event loop (as the gateway calls them) and prints
the best of 7 repeats, us an operation; rounds alternate the trees so a change in the machine's load hits
both.
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


from starlette.datastructures import Headers
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp_types import JSONRPCResponse
from mcp_types import methods as sdk_methods

ECHO = {"type": "object", "properties": {"text": {"title": "Text", "type": "string"}}, "required": ["text"]}
AIRLINE = {"type": "object", "required": ["reservation_id"], "properties": {
    "reservation_id": {"type": "string", "description": "The reservation id, such as '8JX2WO'."},
    "passengers": {"type": "array", "items": {"type": "object", "required": ["first_name"], "properties": {
        "first_name": {"type": "string"}, "last_name": {"type": "string"}, "dob": {"type": "string"}}}},
    "payment_id": {"type": "string"}, "cabin": {"type": "string", "enum": ["basic_economy", "economy"]}}}
http_headers = Headers(scope={"type": "http",
                              "headers": [(k.encode(), v.encode()) for k, v in headers.items()]})
try:
    from sentinel_mcp.app.param_header_check import ParamHeaderCheck
    param_check = ParamHeaderCheck().refusal
except ImportError:
    from mcp.shared.inbound import validate_mcp_param_headers as param_check
try:
    from sentinel_mcp.app.lean_session_calls import json_answer
except ImportError:
    def json_answer(transport, message):
        response = transport._create_json_response(message)
        return response.status_code, response.raw_headers, response.body
try:
    from sentinel_mcp.gateway.plain_calls import plain_handshake_params

    def surface(params):
        if not plain_handshake_params(params, "2025-11-25"):
            sdk_methods.validate_client_request("tools/call", "2025-11-25", params)
except ImportError:
    def surface(params):
        sdk_methods.validate_client_request("tools/call", "2025-11-25", params)
try:
    from sentinel_mcp.app.lean_calls import accepts_json_and_sse

    def accept(value):
        return accepts_json_and_sse(value)
except ImportError:
    from sentinel_mcp.app.lean_session_calls import _accepts_json_and_sse

    def accept(value):
        return _accepts_json_and_sse(value.decode("latin-1"))
from types import SimpleNamespace
from sentinel_mcp.gateway.catalog import Catalog
from sentinel_mcp.gateway.catalog_view import CatalogView
from sentinel_mcp.identity.principal import OWNER, Principal
from tests.gateway.catalog_upstream import StandInUpstream

catalog = Catalog()  # 10 servers of 10 tools
catalog.rebuild([StandInUpstream(f"s{i}", [f"tool{j}" for j in range(10)], prefix=f"s{i}")
                 for i in range(10)])
view = CatalogView.__new__(CatalogView)
view.manager = SimpleNamespace(catalog=catalog)
limited = Principal("agent", "token", upstreams=("s1", "s9"), tools=("s9__*", "*__tool1"))


def schema_of(name, principal):
    if hasattr(view, "catalog_tool"):
        tool = view.catalog_tool(name, principal)
        return tool.input_schema if tool is not None else None
    for tool in view.list_catalog_tools(principal):  # main's _schema_lookup
        if tool.name == name:
            return tool.input_schema
    return None


transport = StreamableHTTPServerTransport(mcp_session_id="ab" * 16)
answer = JSONRPCResponse(jsonrpc="2.0", id=7, result={"content": [{"type": "text", "text": "ok"}],
                         "structuredContent": {"result": "ok"}, "isError": False,
                         "_meta": {"sentinel/session": "s" * 80}})


async def main():
    plain = PlainCalls()
    guard = CallerGuard(None, bind_host="127.0.0.1", port=8931, auth=Authenticator([TokenResolver()]))
    out = {}
    for name, fn in (("PlainCalls.connection", lambda: plain.connection(params)),
                     ("CallerGuard.host_allowed", lambda: guard.host_allowed("127.0.0.1:8931")),
                     ("lean request: header lines", lambda: lines(headers)),
                     ("lean request: body text", lambda: body(message).encode()),
                     ("Mcp-Param check, echo schema",
                      lambda: param_check(ECHO, {"text": "hi"}, http_headers)),
                     ("Mcp-Param check, airline schema",
                      lambda: param_check(AIRLINE, {"reservation_id": "8JX2WO"}, http_headers)),
                     ("schema look-up, 100 tools, owner", lambda: schema_of("s9__tool1", OWNER)),
                     ("schema look-up, 100 tools, limited", lambda: schema_of("s9__tool1", limited)),
                     ("2025 params' surface check",
                      lambda: surface({"name": "tb__echo", "arguments": {"a": 1}})),
                     ("2025 JSON answer", lambda: json_answer(transport, answer)),
                     ("2025 Accept rule", lambda: accept(b"application/json, text/event-stream"))):
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
