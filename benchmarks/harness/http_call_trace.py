"""Where ONE sequential streamable-HTTP call's added time goes, stage by stage (issue 21, added-latency
goal): ``stdio_call_trace.py``'s breakdown for the HTTP front. A raw HTTP/1.1 client (a blocking socket, kept
alive, ``TCP_NODELAY``: the same tiny cost on both sides) calls the test toolbox's no-op through the gateway N
times in a row; the gateway forwards to the very toolbox HTTP server the direct side calls, in the client's
era (``"protocol": "modern"`` for 2026-07-28, ``"legacy"`` for 2025-11-25: its handshake, then calls on the
session), or with ``--upstream stdio`` to a toolbox process of its own. The gateway runs under this file
(``--serve``), which stamps each stage's wall clock (CLOCK_MONOTONIC, the client's clock too) and the event
loop thread's CPU clock. Per stage it prints the median wall time, the loop thread's CPU in it, and the rest
(a wait). Then, over a second run of N calls without stamps, blocks of 25 alternate with the same client on
the direct toolbox, and ``/proc``'s per-thread counters are read around them.

Stages, in the order a 2026-07-28 call passes them (``wake``: ``epoll`` returned on the loop's thread): client
write -> wake -> front bytes (``FrontHTTPProtocol.data_received``: llhttp's callbacks, the request's cycle
and task made) -> the ASGI task running (``run_asgi``) -> ``CallerGuard`` -> ``WireGuard`` (body read,
parsed, checked) -> the lean path (``LeanCalls`` / ``LeanSessionCalls``) -> the SDK kernel ->
``Front.call_tool`` -> ``Gateway.run`` -> route -> validate -> guard -> decision row committed -> the
upstream POST written (``lean_http``) -> wake -> upstream bytes -> the answer parsed and validated -> answer
row committed -> the front's answer written (``HeadHoldingTransport.write``) -> client read.
``--cprofile N``: instead, cProfile of the loop thread over N calls; ``--pyspy N``: py-spy over N more calls.
Usage: python benchmarks/harness/http_call_trace.py [--calls 500] [--era modern|legacy]
       [--upstream http|stdio] [--tree DIR] [--cprofile N] [--pyspy N]
       [--tool echo --arguments '{"text": "hi"}']
(``TMPDIR=/dev/shm``: the audit's fsyncs on tmpfs.)
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TOOLBOX = ROOT / "tests" / "gateway" / "toolbox_server.py"
TOKEN = "benchmark-owner-token-0123456789"
MODERN, HANDSHAKE = "2026-07-28", "2025-11-25"
WARM = 100
TICK = os.sysconf("SC_CLK_TCK")

# (stage, its first stamp, its last stamp)
GROUPS = (
    ("client's write -> the gateway's read (wake-up)", "client write", "front bytes"),
    ("HTTP parse (llhttp callbacks), cycle + task made", "front bytes", "asgi >"),
    ("uvicorn/Starlette layers to CallerGuard", "asgi >", "caller >"),
    ("CallerGuard: headers, Host, Origin, token", "caller >", "wire >"),
    ("WireGuard: body read, parsed, checked", "wire >", "lean >"),
    ("lean path: checks, request objects, to the kernel", "lean >", "kernel >"),
    ("SDK kernel, Front.call_tool to Gateway.run", "kernel >", "run >"),
    ("route + validate", "run >", "decide >"),
    ("guard (the default guard)", "decide >", "decision row >"),
    ("decision row: built, committed", "decision row >", "decision row <"),
    ("forward: the upstream's POST built and written", "decision row <", "upstream written"),
    ("upstream: the toolbox's round trip, the loop's wake-up", "upstream written", "upstream bytes"),
    ("answer read: parsed, validated, result checks", "upstream bytes", "answer row >"),
    ("answer row: built, committed", "answer row >", "answer row <"),
    ("answer out: encoded, written (front write)", "answer row <", "front write"),
    ("front write -> the client's read", "front write", "client read"),
)


def serve(out: str, argv: list[str]) -> None:
    """The gateway with its stages stamped; the stamps go to ``out`` on SIGUSR1, SIGUSR2 turns them off/on."""
    import asyncio
    import functools
    import runpy
    import selectors

    profile_to = os.environ.get("TRACE_CPROFILE")
    if profile_to:  # ``--cprofile``: no stamps; cProfile of the loop thread between SIGUSR1 and SIGUSR2
        import cProfile

        prof = cProfile.Profile()
        signal.signal(signal.SIGUSR1, lambda *_: prof.enable())

        def dump_profile(*_: object) -> None:
            prof.disable()
            prof.dump_stats(profile_to)

        signal.signal(signal.SIGUSR2, dump_profile)
        sys.argv = ["sentinel_mcp", *argv]
        runpy.run_module("sentinel_mcp", run_name="__main__")
        return
    stamps: list[tuple[str, int, int]] = []
    now, cpu = time.perf_counter_ns, time.thread_time_ns
    on = [True]

    def stamp(label: str) -> None:
        if on[0]:
            stamps.append((label, now(), cpu()))

    def around(owner: Any, name: str, label: str, enter: bool = True, leave: bool = True) -> None:
        f = getattr(owner, name)
        if asyncio.iscoroutinefunction(f):
            @functools.wraps(f)
            async def w(*a: Any, **k: Any) -> Any:
                if enter:
                    stamp(f"{label} >" if leave else label)
                try:
                    return await f(*a, **k)
                finally:
                    if leave:
                        stamp(f"{label} <")
        else:
            @functools.wraps(f)
            def w(*a: Any, **k: Any) -> Any:  # type: ignore[misc]
                if enter:
                    stamp(f"{label} >" if leave else label)
                try:
                    return f(*a, **k)
                finally:
                    if leave:
                        stamp(f"{label} <")
        setattr(owner, name, w)

    select = selectors.EpollSelector.select

    def traced_select(self: Any, timeout: float | None = None) -> Any:
        events = select(self, timeout)
        if events and timeout != 0:
            stamp("wake")
        return events

    selectors.EpollSelector.select = traced_select  # type: ignore[method-assign]

    from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

    from sentinel_mcp.app import http_app, lean_calls, lean_session_calls
    from sentinel_mcp.app.http_protocol import FrontHTTPProtocol, HeadHoldingTransport
    from sentinel_mcp.gateway import lean_http, lean_upstream
    from sentinel_mcp.gateway.call_record import CallRecord
    from sentinel_mcp.gateway.core import Gateway
    from sentinel_mcp.gateway.front import Front
    from sentinel_mcp.gateway.wire_guard import WireGuard

    around(FrontHTTPProtocol, "data_received", "front bytes", leave=False)
    around(RequestResponseCycle, "run_asgi", "asgi", leave=False)
    around(http_app.CallerGuard, "__call__", "caller", leave=False)
    around(WireGuard, "__call__", "wire", leave=False)
    around(WireGuard, "_checked", "body read", leave=False)
    around(lean_calls.LeanCalls, "__call__", "lean", leave=False)
    around(lean_session_calls.LeanSessionCalls, "__call__", "lean", leave=False)
    around(lean_calls, "serve_call", "kernel", leave=False)
    around(lean_session_calls, "dispatch", "kernel", leave=False)
    around(Front, "call_tool", "front call", leave=False)
    around(Gateway, "run", "run")
    around(Gateway, "_route", "route", enter=False)
    around(Gateway, "_validate", "validate", enter=False)
    around(Gateway, "_decide", "decide")
    around(CallRecord, "decided", "decision row")
    around(CallRecord, "finished", "answer row")
    around(lean_upstream.LeanCaller, "call_tool", "forward", leave=False)
    around(lean_http._Connection, "head", "upstream written", leave=False)
    around(lean_http._Connection, "data_received", "upstream bytes", leave=False)
    around(lean_upstream, "validated_result", "validated", enter=False)
    around(HeadHoldingTransport, "write", "front write", leave=False)
    try:
        from sentinel_mcp.policy.guard import PolicyGuard

        around(PolicyGuard, "decide", "guard")
    except ImportError:
        pass

    def dump(*_: object) -> None:
        Path(out).write_text(json.dumps(stamps))

    def toggle(*_: object) -> None:
        on[0] = not on[0]

    signal.signal(signal.SIGUSR1, dump)
    signal.signal(signal.SIGUSR2, toggle)
    sys.argv = ["sentinel_mcp", *argv]
    runpy.run_module("sentinel_mcp", run_name="__main__")


class Client:
    """A raw HTTP/1.1 client on one kept-alive connection: a call is one ``sendall`` and reads to the answer's
    end (Content-Length, or chunked: an event stream's last chunk)."""

    def __init__(self, port: int, tool: str, era: str, arguments: dict[str, Any] | None = None) -> None:
        self.port, self.era = port, era
        self.arguments = arguments or {}
        self.sock = self._connect()
        self.buf = b""
        self.sid: str | None = None
        if era == "legacy":
            info = {"name": "trace", "version": "1"}
            status, headers, _ = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": info}})
            assert status == 200, status
            self.sid = headers.get("mcp-session-id")
            self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        _, _, text = self.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": self._meta({})},
                               extra={"Mcp-Method": "tools/list"} if era == "modern" else {})
        tools = _json_of(text)["result"]["tools"]
        self.tool = next(t["name"] for t in tools if t["name"].endswith(tool))
        self.n = 100

    def _connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    def _meta(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.era == "legacy":
            return params
        return {**params, "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                                    "io.modelcontextprotocol/clientInfo": {"name": "trace", "version": "1"},
                                    "io.modelcontextprotocol/clientCapabilities": {}}}

    def request_bytes(self, message: dict[str, Any], extra: dict[str, str] | None = None) -> bytes:
        body = json.dumps(message).encode()
        headers = {"Host": f"127.0.0.1:{self.port}", "Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream", "Authorization": f"Bearer {TOKEN}"}
        if self.era == "modern":
            headers["MCP-Protocol-Version"] = MODERN
        elif self.sid is not None:
            headers |= {"MCP-Protocol-Version": HANDSHAKE, "Mcp-Session-Id": self.sid}
        headers |= extra or {}
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        return f"POST /mcp HTTP/1.1\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode() + body

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise SystemExit("the server closed the connection")
        self.buf += chunk

    def read_answer(self) -> tuple[int, dict[str, str], bytes]:
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        if "content-length" in headers:
            size = int(headers["content-length"])
            while len(self.buf) < size:
                self._fill()
            body, self.buf = self.buf[:size], self.buf[size:]
        elif headers.get("transfer-encoding") == "chunked":
            out = b""
            while True:
                while b"\r\n" not in self.buf:
                    self._fill()
                line, rest = self.buf.split(b"\r\n", 1)
                size = int(line.split(b";")[0], 16)
                while len(rest) < size + 2:
                    self._fill()
                    line, rest = self.buf.split(b"\r\n", 1)
                out += rest[:size]
                self.buf = rest[size + 2:]
                if size == 0:
                    break
            body = out
        else:
            body = b""
        if headers.get("connection") == "close":
            self.sock.close()
            self.sock = self._connect()
            self.buf = b""
        return status, headers, body

    def post(self, message: dict[str, Any], extra: dict[str, str] | None = None) -> tuple[int, dict[str, str],
                                                                                        bytes]:
        self.sock.sendall(self.request_bytes(message, extra))
        return self.read_answer()

    def call(self) -> tuple[int, int]:
        self.n += 1
        data = self.request_bytes({"jsonrpc": "2.0", "id": self.n, "method": "tools/call",
                                   "params": self._meta({"name": self.tool, "arguments": self.arguments})},
                                  {"Mcp-Method": "tools/call", "Mcp-Name": self.tool} if self.era == "modern"
                                  else None)
        t0 = time.perf_counter_ns()
        self.sock.sendall(data)
        status, _, body = self.read_answer()
        t1 = time.perf_counter_ns()
        if status != 200 or b'"result"' not in body or b'"isError":true' in body:
            raise SystemExit(f"the call failed: HTTP {status} {body[:300]!r}")
        return t0, t1


def _json_of(body: bytes) -> dict[str, Any]:
    text = body.decode()
    if text.lstrip().startswith("{"):
        return json.loads(text)  # type: ignore[no-any-return]
    for line in text.splitlines():  # an event stream: its (last) data line
        if line.startswith("data:") and line[5:].strip():
            found = json.loads(line[5:])
    return found  # type: ignore[no-any-return]


def _wait_port(port: int, proc: subprocess.Popen[bytes], seconds: float = 90) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"the server ended ({proc.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the server did not listen in time")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--serve":
        return serve(sys.argv[2], sys.argv[3:])
    sys.path.insert(0, str(HERE))
    from stdio_call_trace import per_call, threads

    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--era", choices=("modern", "legacy"), default="modern")
    ap.add_argument("--upstream", choices=("http", "stdio"), default="http")
    ap.add_argument("--tree", default=str(ROOT), help="the source tree the gateway runs")
    ap.add_argument("--tool", default="noop", help="the toolbox's tool called (noop; echo with arguments)")
    ap.add_argument("--arguments", default="{}", help='its arguments, JSON (echo: \'{"text": "hi"}\')')
    ap.add_argument("--cprofile", type=int, default=0, metavar="N",
                    help="instead: cProfile of the loop thread over N calls, the top functions per call")
    ap.add_argument("--pyspy", type=int, default=0, metavar="N",
                    help="after the counted run: py-spy over N more calls, us a call per function")
    args = ap.parse_args()
    tree = Path(args.tree).resolve()
    data = Path(tempfile.mkdtemp(prefix="http-trace-"))
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    up_port, port = _free_port(), _free_port()
    toolbox = subprocess.Popen([sys.executable, str(TOOLBOX), "--http", str(up_port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    behind = ({"url": f"http://127.0.0.1:{up_port}/mcp", "protocol": args.era} if args.upstream == "http"
              else {"command": sys.executable, "args": [str(TOOLBOX)]})
    cfg = data / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": behind}, "sentinel": {
        "data_dir": str(data / "state"), "builtins": [], "http": {"token": TOKEN}}}))
    cfg.chmod(0o600)
    out = data / "stamps.json"
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(out), "-c", str(cfg), "serve", "--http",
         f"127.0.0.1:{port}"],
        cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env={**env, "PYTHONPATH": str(tree), **({"TRACE_CPROFILE": str(out)} if args.cprofile else {})})
    load0 = os.getloadavg()[0]
    try:
        _wait_port(up_port, toolbox)
        _wait_port(port, proc)
        time.sleep(1.0)  # the upstream connected behind the listening socket
        arguments = json.loads(args.arguments)
        client = Client(port, f"__{args.tool}", args.era, arguments)
        for _ in range(WARM):
            client.call()
        if args.cprofile:
            return _cprofiled(proc, client, out, args.cprofile, tree)
        calls = [client.call() for _ in range(args.calls)]
        proc.send_signal(signal.SIGUSR1)
        for _ in range(200):
            if out.exists():
                break
            time.sleep(0.05)
        time.sleep(0.2)
        stamps = json.loads(out.read_text())
        proc.send_signal(signal.SIGUSR2)  # stamps off: the counted run
        time.sleep(0.1)
        direct = Client(up_port, args.tool, args.era, arguments)
        for _ in range(WARM):
            direct.call()
        plain: list[tuple[int, int]] = []
        alone: list[tuple[int, int]] = []
        watched = {"gateway": proc.pid, "toolbox": toolbox.pid}
        before = {k: threads(p) for k, p in watched.items()}
        while len(plain) < args.calls:  # blocks alternated: the machine's load moves
            plain += [client.call() for _ in range(25)]
            alone += [direct.call() for _ in range(25)]
        after = {k: threads(p) for k, p in watched.items()}
        if args.pyspy:
            spied = _pyspy(proc.pid, client, args.pyspy, data / "pyspy.txt")
    finally:
        for p in (proc, toolbox):
            p.send_signal(signal.SIGTERM)
        for p in (proc, toolbox):
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
    (data / "calls.json").write_text(json.dumps(calls))  # the client's (write, read) clocks, for re-reading
    traced = per_call(stamps, calls)
    print(f"\nOne sequential streamable-HTTP no-op call ({args.era}, {args.upstream} upstream), {args.calls} "
          f"calls after {WARM}; data in {data}; load average {load0:.1f} -> {os.getloadavg()[0]:.1f}")

    def p(xs: list[tuple[int, int]], q: float) -> float:
        return sorted((b - a) / 1e6 for a, b in xs)[int(len(xs) * q)]

    print(f"client round trip p50 / p90, ms: through Sentinel {p(plain, .5):.3f} / {p(plain, .9):.3f} "
          f"(stamped {p(calls, .5):.3f}), direct {p(alone, .5):.3f} / {p(alone, .9):.3f} (blocks of 25 "
          f"alternated): added {p(plain, .5) - p(alone, .5):+.3f} / {p(plain, .9) - p(alone, .9):+.3f}")
    shapes: dict[tuple[str, ...], list[list[tuple[str, int, int]]]] = {}
    for c in traced:
        shapes.setdefault(tuple(s[0] for s in c), []).append(c)
    shape, alike = max(shapes.items(), key=lambda kv: len(kv[1]))
    print(f"{len(alike)} of {len(traced)} calls took the most common path ({len(shapes)} paths); its steps "
          f"(median us: wall, loop thread CPU, the rest):")
    total_wall = total_cpu = 0.0
    for i in range(1, len(shape)):
        walls = [(c[i][1] - c[i - 1][1]) / 1e3 for c in alike]
        cpus = [(c[i][2] - c[i - 1][2]) / 1e3 for c in alike if c[i][2] >= 0 and c[i - 1][2] >= 0]
        w = statistics.median(walls)
        u = statistics.median(cpus) if cpus else float("nan")
        total_wall += w
        total_cpu += u if cpus else 0.0
        print(f"  {shape[i - 1]:>22} -> {shape[i]:22} {w:8.1f} {u:8.1f} {w - u if cpus else w:8.1f}")
    print(f"  {'sum of medians':>48} {total_wall:8.1f} {total_cpu:8.1f}")
    print("\nthe same calls by stage (median us: wall, loop thread CPU from the gateway's first stamp in it)")
    for name, start, end in GROUPS:
        walls, cpus = [], []
        for c in alike:
            labels = [x[0] for x in c]
            if start not in labels or end not in labels[labels.index(start):]:
                continue
            i, j = _stage_bounds(labels, start, end)
            if i < 0 or j < i:
                continue
            walls.append((c[j][1] - c[i][1]) / 1e3)
            inside = [x for x in c[i:j + 1] if x[2] >= 0]
            if len(inside) > 1:
                cpus.append((inside[-1][2] - inside[0][2]) / 1e3)
        if walls:
            u = f"{statistics.median(cpus):8.1f}" if cpus else "       -"
            print(f"  {name:58} {statistics.median(walls):8.1f} {u}")
    print(f"\nnot stamped, {len(plain)} calls each: per thread, voluntary / involuntary switches a call, us "
          "a call on a CPU, waiting for one, and in the kernel (of the CPU; clock ticks, coarse)")
    for label, was in before.items():
        n = len(plain) if label == "gateway" else len(plain) + len(alone)
        for t, (v, iv, run, wait, kern) in sorted(was.items()):
            if t in after[label]:
                v2, iv2, run2, wait2, kern2 = after[label][t]
                if v2 - v or run2 - run:
                    print(f"  {label:8} {t:28} {(v2 - v) / n:6.2f} {(iv2 - iv) / n:6.2f} "
                          f"{(run2 - run) / 1e3 / n:8.1f} {(wait2 - wait) / 1e3 / n:8.1f} "
                          f"{(kern2 - kern) * 1e6 / TICK / n:8.0f}")

    if args.pyspy:
        _print_pyspy(*spied, args.pyspy)


def _stage_bounds(labels: list[str], start: str, end: str) -> tuple[int, int]:
    """Where a stage starts and ends in one call's stamps. The front's answer is the last of its writes (a
    head held, then joined to the body); the upstream's answer is its last read before it is validated (a
    handshake-era upstream sends its event stream's head, event and last chunk apart, and the last chunk of
    the call before may arrive while this one is read)."""
    def last(label: str, before: int) -> int:
        found = [k for k in range(before) if labels[k] == label]
        return found[-1] if found else -1

    done = labels.index("validated <") if "validated <" in labels else len(labels)
    special = {"front write": last("front write", len(labels)),
               "upstream bytes": last("upstream bytes", done)}
    i = special.get(start, -1) if start in special else labels.index(start)
    j = special[end] if end in special else labels.index(end, max(i, 0))
    return i, j


RATE = 1000  # py-spy samples a second


def _pyspy(pid: int, client: Client, calls: int, out: Path) -> tuple[Path, float]:
    """py-spy on the gateway (its threads, idle frames left out) while ``calls`` calls run; the wall time."""
    spy = subprocess.Popen([str(Path(sys.executable).with_name("py-spy")), "record", "--pid", str(pid),
                            "--rate", str(RATE), "--format", "raw", "--output", str(out), "--nonblocking"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.5)  # attached
    t0 = time.perf_counter()
    for _ in range(calls):
        client.call()
    wall = time.perf_counter() - t0
    spy.send_signal(signal.SIGINT)
    spy.wait(30)
    return out, wall


def _print_pyspy(out: Path, wall: float, calls: int) -> None:
    inclusive: dict[str, int] = {}
    own: dict[str, int] = {}
    total = 0
    for line in out.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        count = int(n)
        total += count
        frames = [f.split(" (", 1)[0] + " (" + f.rsplit("/", 1)[-1] if " (" in f else f
                  for f in stack.split(";")]
        for f in set(frames):
            inclusive[f] = inclusive.get(f, 0) + count
        own[frames[-1]] = own.get(frames[-1], 0) + count
    per = 1e6 / RATE / calls  # us a call per sample
    print(f"\npy-spy, {calls} calls in {wall:.2f} s, {total} samples not idle ({total * per:.0f} us a call): "
          "us a call, inclusive (top 45)")
    for f, n in sorted(inclusive.items(), key=lambda kv: -kv[1])[:45]:
        print(f"  {n * per:8.1f}  {f[:110]}")
    print("self (top 30)")
    for f, n in sorted(own.items(), key=lambda kv: -kv[1])[:30]:
        print(f"  {n * per:8.1f}  {f[:110]}")


def _cprofiled(proc: subprocess.Popen[bytes], client: Client, out: Path, calls: int, tree: Path) -> None:
    import pstats

    proc.send_signal(signal.SIGUSR1)
    time.sleep(0.3)
    for _ in range(calls):
        client.call()
    proc.send_signal(signal.SIGUSR2)
    for _ in range(400):
        if out.exists():
            break
        time.sleep(0.05)
    time.sleep(0.5)
    stats = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
    rows = []
    for (file, line, name), (_, ncalls, tottime, cumtime, _) in stats.items():
        where = file.replace(str(tree) + "/", "").split("site-packages/")[-1]
        rows.append((f"{where}:{line}:{name}", ncalls / calls, tottime * 1e6 / calls, cumtime * 1e6 / calls))
    print(f"\ncProfile of the loop thread, {calls} calls: {sum(r[1] for r in rows):.0f} Python calls a call, "
          f"{sum(r[2] for r in rows):.0f} us a call (profiled)")
    print("by own time (calls a call, own us, cumulative us):")
    for key, n, own, cum in sorted(rows, key=lambda r: -r[2])[:40]:
        print(f"  {n:6.1f} {own:7.1f} {cum:8.1f}  {key[:100]}")
    print("by calls a call:")
    for key, n, own, cum in sorted(rows, key=lambda r: -r[1])[:25]:
        print(f"  {n:6.1f} {own:7.1f} {cum:8.1f}  {key[:100]}")


if __name__ == "__main__":
    main()
