"""Where the HTTP front's extra latency goes (issue 21): the same no-op ``tools/call`` (2026-07-28) sent over
the raw wire by a client that does nothing but write and read (a blocking socket or pipe, so its own cost is
tiny and the same for every server), sequentially, to the test toolbox over stdio and over streamable HTTP and
to a tree's gateway over stdio and over HTTP (the toolbox over stdio behind it in both). Blocks alternate
between the four. Per target it prints latency p50 / p25 / p10, then, over a separate run of ``--count``
calls each, the server process's CPU and its voluntary context switches per call (all its threads: a hand-off
to a thread and back is two).

The mcp ``Client`` (``proxy_overhead.py``) spends ~1.3 ms more CPU per call over HTTP than over stdio and
does the same work against the toolbox and against Sentinel; this leaves it out, so the differences are the
servers' own. Usage: python benchmarks/harness/front_wakeups.py [--tree DIR] [--calls 600] [--block 50]
[--count 300] (``TMPDIR=/dev/shm``: the audit's fsyncs free).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(HERE)]
from load import CLK, TOKEN, call_body, call_headers  # noqa: E402
from tests.conftest import free_port, stop_process, wait_http  # noqa: E402

TOOLBOX = str(ROOT / "tests" / "gateway" / "toolbox_server.py")


class Http:
    def __init__(self, port: int, tool: str, pid: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.pid, self.n, self.body = pid, 0, call_body(tool)
        head = "".join(f"{k}: {v}\r\n" for k, v in call_headers(tool).items())
        self.head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}"

    def call(self) -> None:
        self.n += 1
        body = self.body.replace('"id": 1', f'"id": {self.n}', 1).encode()
        self.sock.sendall(f"{self.head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        buf = b""
        while True:
            buf += self.sock.recv(65536)
            end = buf.find(b"\r\n\r\n")
            if end >= 0 and b"content-length:" in buf[:end].lower():
                size = int(buf[:end].lower().split(b"content-length:")[1].split(b"\r\n")[0])
                if len(buf) >= end + 4 + size:
                    break
        if b'"result"' not in buf or b'"isError":true' in buf:
            raise RuntimeError(f"the call failed: {buf[:300]!r}")


class Stdio:
    def __init__(self, argv: list[str], env: dict[str, str], tool: str, cwd: Path | None = None) -> None:
        # ``cwd``: the tree measured; ``python -m`` puts the working directory ahead of PYTHONPATH, so a
        # gateway started elsewhere would import the caller's tree instead
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=cwd,
                                     stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        self.pid, self.n, self.body = self.proc.pid, 0, call_body(tool)

    def call(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.n += 1
        line = self.body.replace('"id": 1', f'"id": {self.n}', 1).encode() + b"\n"
        os.write(self.proc.stdin.fileno(), line)
        buf = b""
        while not buf.endswith(b"\n"):
            buf += os.read(self.proc.stdout.fileno(), 65536)
        if b'"result"' not in buf or b'"isError":true' in buf:
            raise RuntimeError(f"the call failed: {buf[:300]!r}")


def usage(pid: int) -> tuple[int, float]:
    """Voluntary context switches and CPU seconds of every thread of ``pid``."""
    switches, cpu = 0, 0.0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        switches += int(status.split("\nvoluntary_ctxt_switches:")[1].split()[0])
        cpu += (int(stat[11]) + int(stat[12])) / CLK
    return switches, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", default=str(ROOT))
    ap.add_argument("--calls", type=int, default=600)
    ap.add_argument("--block", type=int, default=50)
    ap.add_argument("--count", type=int, default=300)
    args = ap.parse_args()
    tree = Path(args.tree).resolve()
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    tmp = Path(tempfile.mkdtemp(prefix="front-wakeups-"))
    cfg = tmp / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
                               "sentinel": {"data_dir": str(tmp / "state"), "builtins": [],
                                            "http": {"token": TOKEN}}}))
    cfg.chmod(0o600)
    gw_env = {**env, "PYTHONPATH": str(tree)}
    serve = [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve"]
    up, port = free_port(), free_port()
    procs: list[subprocess.Popen[Any]] = [
        subprocess.Popen([sys.executable, TOOLBOX, "--http", str(up)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=env),
        subprocess.Popen([*serve, "--http", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=gw_env, cwd=tree, start_new_session=True)]
    try:
        wait_http(f"http://127.0.0.1:{up}/mcp", proc=procs[0])
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=procs[1], timeout=90)
        targets: dict[str, Http | Stdio] = {
            "toolbox, stdio": Stdio([sys.executable, TOOLBOX], env, "noop"),
            "toolbox, HTTP": Http(up, "noop", procs[0].pid),
            "Sentinel, stdio": Stdio(serve, gw_env, "tb__noop", cwd=tree),
            "Sentinel, HTTP": Http(port, "tb__noop", procs[1].pid)}
        procs += [t.proc for t in targets.values() if isinstance(t, Stdio)]
        for target in targets.values():
            for _ in range(100):  # warm up
                target.call()
        times: dict[str, list[float]] = {name: [] for name in targets}
        while min(len(t) for t in times.values()) < args.calls:
            for name, target in targets.items():
                for _ in range(args.block):
                    t0 = time.perf_counter()
                    target.call()
                    times[name].append((time.perf_counter() - t0) * 1000)
        counted = {}
        for name, target in targets.items():
            before = usage(target.pid)
            for _ in range(args.count):
                target.call()
            after = usage(target.pid)
            counted[name] = ((after[0] - before[0]) / args.count, (after[1] - before[1]) * 1000 / args.count)
    finally:
        for proc in reversed(procs):
            stop_process(proc)
    print(f"\nRaw-wire sequential no-op, {args.calls} calls each in alternating blocks of {args.block}; "
          f"load average {os.getloadavg()[0]:.1f}; data in {tmp}\n")
    print(f"{'server':18} {'p50 ms':>7} {'p25':>7} {'p10':>7} {'CPU ms/call':>12} {'vol. switches/call':>19}")
    for name, values in times.items():
        v = sorted(values)
        print(f"{name:18} {statistics.median(v):7.2f} {v[len(v) // 4]:7.2f} {v[len(v) // 10]:7.2f} "
              f"{counted[name][1]:12.2f} {counted[name][0]:19.2f}")


if __name__ == "__main__":
    main()
