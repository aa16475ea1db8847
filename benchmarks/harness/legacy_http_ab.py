"""Sequential no-op calls over streamable HTTP in both protocol eras, this tree against another, interleaved
(issue 21, branch i21-legacy-http): the gateway's CPU per call, read from /proc, is the figure that stands
the shared machine's load; the client's p50 is printed beside it.

Each run starts one tree's gateway (stdio toolbox upstream, no built-ins, data directory on tmpfs), opens
one real ``mcp`` client in the given mode (``legacy``: the 2025-11-25 handshake, a session, event-stream
answers; ``auto``: 2026-07-28), warms up, then times N calls and the gateway's CPU over them.

Usage: python benchmarks/harness/legacy_http_ab.py --base /work/main [--calls 600] [--rounds 3]
       [--modes legacy,auto]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
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
    args = ap.parse_args()
    trees = {"base": Path(args.base).resolve(), "this": ROOT}
    got: dict[tuple[str, str], list[tuple[float, float]]] = {}
    loads = [os.getloadavg()[0]]
    for r in range(args.rounds):
        for mode in args.modes.split(","):
            order = ("base", "this") if r % 2 == 0 else ("this", "base")
            for name in order:
                p50, per_call = one_run(trees[name], mode, args.calls)
                got.setdefault((mode, name), []).append((p50, per_call))
                print(f"round {r + 1} {mode:6} {name:4}: client p50 {p50:5.2f} ms, gateway CPU "
                      f"{per_call:5.2f} ms per call (load {os.getloadavg()[0]:.1f})", flush=True)
        loads.append(os.getloadavg()[0])
    print(f"\n{args.calls} sequential no-op calls per run, {args.rounds} rounds interleaved, load average "
          f"{min(loads):.1f}-{max(loads):.1f}; medians of the rounds")
    print(f"{'mode':8}{'tree':6}{'client p50 ms':>15}{'gateway CPU ms/call':>22}")
    for mode in args.modes.split(","):
        for name in ("base", "this"):
            rows = got[(mode, name)]
            print(f"{mode:8}{name:6}{statistics.median(r[0] for r in rows):15.2f}"
                  f"{statistics.median(r[1] for r in rows):22.2f}")
    print("goal (issue 21): added latency <= 0.5 ms p50 in every era; CPU per call as low as the 2026 path's")


if __name__ == "__main__":
    main()
