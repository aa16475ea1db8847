"""Sequential no-op calls over streamable HTTP in both protocol eras, this tree against another, interleaved
(issue 21, branch i21-legacy-http): the gateway's CPU per call, read from /proc, is the figure that stands
the shared machine's load; the client's p50 is printed beside it.

Each run starts one tree's gateway (stdio toolbox upstream, no built-ins, data directory on tmpfs), opens
one real ``mcp`` client in the given mode (``legacy``: the 2025-11-25 handshake, a session, event-stream
answers; ``auto``: 2026-07-28), warms up, then times N calls and the gateway's CPU over them. The SDK's
client is heavy in the handshake era (it also drops its connection after every event-stream answer, since it
stops reading before the last chunk), and on two cores its work inflates the gateway's; ``--raw`` puts a
plain socket client in its place, the gateway's work alone: ``raw-keep`` (one kept-alive connection, every
answer read to its last chunk), ``raw-new`` (a new connection per call, as the SDK's client does) and
``raw-2026`` (the 2026-07-28 call on a kept-alive connection).

Usage: python benchmarks/harness/legacy_http_ab.py --base /work/main [--calls 600] [--rounds 3]
       [--modes legacy,auto] [--raw]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
from proxy_overhead import TOKEN, http_target, sequential  # noqa: E402
from tests.conftest import free_port, stop_process, wait_http  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _read_answer(sock: socket.socket) -> bytes:
    """One HTTP answer read whole (a Content-Length body or every chunk to the last); its body."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += sock.recv(65536)
    head, buf = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").lower().split("\r\n")
    length = next((int(x.split(":", 1)[1]) for x in lines if x.startswith("content-length:")), None)
    if length is not None:
        while len(buf) < length:
            buf += sock.recv(65536)
        return buf[:length]
    body = b""
    while True:
        while b"\r\n" not in buf:
            buf += sock.recv(65536)
        size_line, buf = buf.split(b"\r\n", 1)
        size = int(size_line, 16)
        while len(buf) < size + 2:
            buf += sock.recv(65536)
        body, buf = body + buf[:size], buf[size + 2:]
        if size == 0:
            return body


class RawClient:
    """Plain HTTP/1.1 on a socket: a 2025-11-25 session opened once, then no-op calls."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.base = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"),
                     ("Authorization", f"Bearer {TOKEN}")]
        info = {"name": "raw", "version": "1"}
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": info}}
        self.sock.sendall(self._request(init, self.base))
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(65536)
        sid = next(line.split(b":", 1)[1].strip() for line in head.split(b"\r\n")
                   if line.lower().startswith(b"mcp-session-id:"))
        self.sock.close()
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.session = [*self.base, ("Mcp-Session-Id", sid.decode()), ("MCP-Protocol-Version", "2025-11-25")]
        self.call({"jsonrpc": "2.0", "method": "notifications/initialized"}, self.session)
        self.modern = [*self.base, ("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"),
                       ("Mcp-Name", "tb__noop")]
        self.envelope = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                         "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                         "io.modelcontextprotocol/clientCapabilities": {}}

    def _request(self, body: object, headers: list[tuple[str, str]]) -> bytes:
        data = json.dumps(body).encode()
        lines = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{self.port}", *(f"{k}: {v}" for k, v in headers),
                 f"Content-Length: {len(data)}"]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data

    def call(self, body: object, headers: list[tuple[str, str]]) -> bytes:
        self.sock.sendall(self._request(body, headers))
        return _read_answer(self.sock)

    def noop(self, rid: int, mode: str) -> None:
        if mode == "raw-new":
            self.sock.close()
            self.sock = socket.create_connection(("127.0.0.1", self.port))
        params: dict[str, object] = {"name": "tb__noop", "arguments": {}}
        if mode == "raw-2026":
            params["_meta"] = self.envelope
        answer = self.call({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params},
                           self.modern if mode == "raw-2026" else self.session)
        assert b'"isError":false' in answer, answer[:300]


def raw_calls(port: int, mode: str, calls: int, cpu_of: int) -> tuple[float, float]:
    client = RawClient(port)
    try:
        for i in range(50):
            client.noop(i + 1, mode)
        before, times = cpu(cpu_of), []
        for i in range(calls):
            t0 = time.perf_counter()
            client.noop(i + 100, mode)
            times.append((time.perf_counter() - t0) * 1000)
        return statistics.median(times), 1000 * (cpu(cpu_of) - before) / calls
    finally:
        client.sock.close()


def one_run(tree: Path, mode: str, calls: int) -> tuple[float, float]:
    """(client p50 ms, gateway CPU ms per call) of ``calls`` sequential calls through ``tree``'s gateway."""
    python = str(tree / ".venv" / "bin" / "python")
    data = Path(tempfile.mkdtemp(prefix="legacy-ab-", dir="/dev/shm"))
    cfg = data / "sentinel.json"
    toolbox = str(tree / "tests" / "gateway" / "toolbox_server.py")
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": python, "args": [toolbox]}},
                               "sentinel": {"data_dir": str(data / "state"), "builtins": [],
                                            "http": {"token": TOKEN}}}))
    port = free_port()
    cmd = [python, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"]
    gw = subprocess.Popen(cmd, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"}, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=gw, timeout=60)
        url = f"http://127.0.0.1:{port}/mcp"
        if mode.startswith("raw"):
            return raw_calls(port, mode, calls, gw.pid)
        anyio.run(sequential, http_target(url), 30, mode)  # the gateway's first calls (imports, caches)
        before = cpu(gw.pid)
        times = anyio.run(sequential, http_target(url), calls, mode)
        used = cpu(gw.pid) - before
        # the session's opening, its listing and 20 warm-up calls are counted as calls
        return statistics.median(times), 1000 * used / (calls + 22)
    finally:
        gw.send_signal(signal.SIGINT)
        try:
            gw.wait(20)
        except subprocess.TimeoutExpired:
            pass
        stop_process(gw)
        shutil.rmtree(data, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="the other tree (with its own .venv), e.g. /work/main")
    ap.add_argument("--calls", type=int, default=600)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--modes", default="legacy,auto")
    ap.add_argument("--raw", action="store_true", help="a plain socket client instead of the SDK's")
    args = ap.parse_args()
    if args.raw:
        args.modes = "raw-keep,raw-new,raw-2026"
    trees = {"base": Path(args.base).resolve(), "this": ROOT}
    got: dict[tuple[str, str], list[tuple[float, float]]] = {}
    loads = [os.getloadavg()[0]]
    for r in range(args.rounds):
        for mode in args.modes.split(","):
            order = ("base", "this") if r % 2 == 0 else ("this", "base")
            for name in order:
                p50, per_call = one_run(trees[name], mode, args.calls)
                got.setdefault((mode, name), []).append((p50, per_call))
                print(f"round {r + 1} {mode:8} {name:4}: client p50 {p50:5.2f} ms, gateway CPU "
                      f"{per_call:5.2f} ms per call (load {os.getloadavg()[0]:.1f})", flush=True)
        loads.append(os.getloadavg()[0])
    print(f"\n{args.calls} sequential no-op calls per run, {args.rounds} rounds interleaved, load average "
          f"{min(loads):.1f}-{max(loads):.1f}; medians of the rounds")
    print(f"{'mode':10}{'tree':6}{'client p50 ms':>15}{'gateway CPU ms/call':>22}")
    for mode in args.modes.split(","):
        for name in ("base", "this"):
            rows = got[(mode, name)]
            print(f"{mode:10}{name:6}{statistics.median(r[0] for r in rows):15.2f}"
                  f"{statistics.median(r[1] for r in rows):22.2f}")
    print("goal (issue 21): added latency <= 0.5 ms p50 in every era; CPU per call as low as the 2026 path's")


if __name__ == "__main__":
    main()
