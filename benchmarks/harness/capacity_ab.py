"""Capacity of two source trees, interleaved in one run (a busy shared machine moves every rate, so only runs
taken side by side compare): each tree's gateway serves the capacity row of ``pipeline_capacity.py`` (16 wrk
connections, 2026-07-28 ``tools/call`` to the in-process no-op built-in, durable audit), the runs alternate,
and the server's CPU per call is printed beside each rate with wrk's own CPU share.

Usage: python benchmarks/harness/capacity_ab.py --base /work/main [--seconds 5] [--rounds 3]
  [--upstream modern] [--era 2025-11-25] [--base-env NAME=VALUE ...]
  [--this-env NAME=VALUE ...]
``--base-env`` / ``--this-env``: set in that side's environment only (a ``PYTHONPATH=DIR`` is added after
the tree). E.g. ``--base /work/main --base-env SENTINEL_PROLOG_CALL=ctypes``: one tree, the guard's C call
off in the base; ``uvloop_site/sitecustomize.py``: one tree, two event loops.
``--upstream ERA``: instead, both gateways front one real Python MCP upstream (the test toolbox over
streamable HTTP, ``"protocol": ERA``) calling its ``noop``, and the upstream's own direct rate is measured
in the same rounds.
``--airline``: instead, both gateways front the airline example's server over streamable HTTP with the
shipped airline rulebase and call ``get_reservation_details`` (a read the guard learns ~26 facts from:
``pipeline_capacity.airline_read``'s load), with the server's own direct rate in the same rounds.
``--syscalls``: after the rounds, one more run of each gateway under ``strace -c -f`` prints its system calls
per call (the five most frequent, and the fsyncs, beside the total); strace slows the server, so that run's
rate is not comparable, only its counts.
``--era 2025-11-25``: the calls are of the handshake era instead, all 16 connections on one session per
server (opened first), each request with its own id.
Each tree runs with its own ``.venv`` when it has one (else this interpreter) and its sources first on the
path.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(HERE), str(ROOT / "benchmarks")]
import pipeline_capacity as pc  # noqa: E402
from load import MODERN, TOKEN, call_body, call_headers, check_call, handshake, wrk  # noqa: E402
from tests.conftest import stop_process  # noqa: E402


def syscalls(pid: int, run) -> str:
    """System calls of ``pid`` (all its threads) per request of ``run()``, from ``strace -c``'s summary."""
    out = Path(tempfile.mkdtemp(prefix="sentinel-strace-")) / "summary"
    tracer = subprocess.Popen(["strace", "-c", "-f", "-o", str(out), "-p", str(pid)],
                              stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # attached to every thread before the load starts
    try:
        r = run()
    finally:
        tracer.send_signal(signal.SIGINT)
        tracer.wait(timeout=30)
    counts: dict[str, int] = {}
    for line in out.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
            counts[parts[-1]] = int(parts[3])
    n = max(r.requests, 1)
    top = sorted(counts.items(), key=lambda kv: -kv[1])[:5]
    top += [(k, counts[k]) for k in ("fsync", "fdatasync") if k in counts and (k, counts[k]) not in top]
    return f"{sum(counts.values()) / n:6.2f}  (" + ", ".join(f"{k} {v / n:.2f}" for k, v in top) + ")"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="the other source tree (e.g. main's checkout)")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--upstream", choices=["auto", "legacy", "modern"], default=None)
    ap.add_argument("--airline", action="store_true", help="the airline read the guard learns from")
    ap.add_argument("--base-env", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--this-env", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--syscalls", action="store_true", help="count system calls per call under strace")
    ap.add_argument("--era", choices=[MODERN, "2025-11-25"], default=MODERN, help="the calls' protocol era")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-ab-"))
    servers = {}
    up = None
    tool, upstreams, builtins = "bench__noop", {}, ["bench"]
    direct_tool, arguments, rulebases, seeds = "noop", None, ("default.pl",), None
    try:
        if args.airline:
            port = pc.free_port()
            direct = f"http://127.0.0.1:{port}/mcp"
            up = pc.start([sys.executable, "-m", "examples.airline", "--http", str(port)], direct,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
            tool, direct_tool, builtins = "airline__get_reservation_details", "get_reservation_details", []
            upstreams = {"airline": {"url": direct}}
            arguments = {"reservation_id": "8C8K4E"}
            rulebases = ("default.pl", "airline.pl")
            seeds = {"current_user": "mia_li_3668", "today": "2024-05-15"}
        elif args.upstream:
            port = pc.free_port()
            direct = f"http://127.0.0.1:{port}/mcp"
            up = pc.start([sys.executable, pc.TOOLBOX, "--http", str(port)], direct)
            tool, builtins = "tb__noop", []
            upstreams = {"tb": {"url": direct, "protocol": args.upstream}}
        for name, tree in (("base", Path(args.base).resolve()), ("this tree", ROOT)):
            venv_python = tree / ".venv" / "bin" / "python"
            pc.PY = str(venv_python) if venv_python.exists() else sys.executable
            pc.HARNESS = tree / "benchmarks" / "harness"
            pc.ENV = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(tree)}
            extra = dict(kv.split("=", 1) for kv in (args.base_env if name == "base" else args.this_env))
            pc.ENV.update(extra)
            if "PYTHONPATH" in extra:
                pc.ENV["PYTHONPATH"] = os.pathsep.join((str(tree), extra["PYTHONPATH"]))
            servers[name] = pc.sentinel(tmp, upstreams, builtins, name.replace(" ", "-"), rulebases, seeds)
            if extra.get("BENCH_LOOP"):  # the loop asked for (uvloop_site/sitecustomize.py) is the loop run
                assert extra["BENCH_LOOP"] in Path(f"/proc/{servers[name][0].pid}/maps").read_text(), name
        era = args.era
        sessions = {name: handshake(url) if era != MODERN else None for name, (_, url) in servers.items()}
        calls = {name: (call_body(tool, era, arguments), call_headers(tool, era, sessions[name]))
                 for name in servers}
        if up is not None:
            servers["direct"] = (up, direct)
            sid = handshake(direct, None) if era != MODERN else None
            calls["direct"] = (call_body(direct_tool, era, arguments),
                               call_headers(direct_tool, era, sid, token=None))
        for name, (proc, url) in servers.items():
            if name != "direct":
                check_call(url, tool, era, sessions[name], TOKEN, arguments)
            wrk(url, *calls[name], seconds=1, server_pid=proc.pid)  # warm up
        results: dict[str, list] = {name: [] for name in servers}
        for _ in range(args.rounds):
            for name, (proc, url) in servers.items():
                r = wrk(url, *calls[name], seconds=args.seconds, server_pid=proc.pid)
                results[name].append(r)
                print(f"{name:9}  {pc.fmt(r)}", flush=True)
        if args.syscalls:
            for name, (proc, url) in servers.items():
                counted = syscalls(proc.pid, lambda: wrk(url, *calls[name], seconds=args.seconds))
                print(f"{name:9}  system calls per call: {counted}", flush=True)
    finally:
        for proc, _ in servers.values():
            stop_process(proc)
        if up is not None and "direct" not in servers:
            stop_process(up)
    print(f"\nbase env {args.base_env or '-'}, this env {args.this_env or '-'}; "
          f"load {os.getloadavg()[0]:.1f}")
    for name, rs in results.items():
        rate = sum(r.rate for r in rs) / len(rs)
        cpu = sum(1000 * r.server_cpu / r.rate for r in rs if r.rate) / len(rs)
        client = sum(r.client_cpu for r in rs) / len(rs)
        print(
            f"{name:9}  mean {rate:6.0f} calls/s  {cpu:5.2f} ms server CPU per call  client CPU {client:.3f}"
        )


if __name__ == "__main__":
    main()
