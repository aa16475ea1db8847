"""How many of the real-upstream row's calls are at the upstream at once, and how many audit rows a commit
carries, at 16 and at 64 clients (issue 21: the row's ratio to direct is lower at 16 clients than at 64;
this says whether the pool, a slot limit or the pipeline's depth is why).

The gateway (this tree's, default guard, durable audit, forwarding to the test toolbox with ``"protocol":
"modern"``) runs with three counters patched in (``--serve``): the lean client's requests in flight (entered
and not yet left, ``lean_http._Request``), integrated over time; the pool's open connections at the end; the
SQLite commits (the writer's groups and the commits made inline on the loop). Between SIGUSR1 and SIGUSR2 the
counters run while wrk holds N connections on the gateway; then per N: the rate, the mean requests in flight
at the upstream (Little's law against the wrk connections: the rest are in the gateway's own stages), the
commits a call and the rows a commit (two rows a call). Direct rates at the same N beside it.

Usage: python benchmarks/harness/forward_depth.py [--seconds 6] [--connections 16,64]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def serve(argv: list[str]) -> None:
    """In the gateway's process: the counters, then the capacity launcher."""
    import runpy

    from sentinel_mcp.gateway import lean_http
    from sentinel_mcp.storage import sqlite as sqlite_store

    state: dict[str, float] = {"on": 0.0, "inflight": 0, "area": 0.0, "t": time.monotonic(), "requests": 0,
                               "groups": 0, "inline": 0, "peak": 0}

    def tick(delta: int) -> None:
        now = time.monotonic()
        if state["on"]:
            state["area"] += state["inflight"] * (now - state["t"])
        state["t"] = now
        state["inflight"] += delta
        state["peak"] = max(state["peak"], state["inflight"]) if state["on"] else 0

    enter, leave = lean_http._Request.__aenter__, lean_http._Request.__aexit__

    async def counted_enter(self: Any) -> Any:
        tick(1)
        state["requests"] += 1 if state["on"] else 0
        try:
            return await enter(self)
        except BaseException:
            tick(-1)
            raise

    async def counted_leave(self: Any, *exc: Any) -> Any:
        try:
            return await leave(self, *exc)
        finally:
            tick(-1)

    lean_http._Request.__aenter__ = counted_enter  # type: ignore[method-assign]
    lean_http._Request.__aexit__ = counted_leave  # type: ignore[method-assign]
    group, inline = sqlite_store.SQLiteDatabase._commit_group, sqlite_store.SQLiteDatabase.write_inline

    def counted_group(self: Any, jobs: Any) -> None:
        state["groups"] += 1 if state["on"] else 0
        group(self, jobs)

    def counted_inline(self: Any, make: Any) -> Any:
        out = inline(self, make)
        if out is not None and state["on"]:
            state["inline"] += 1
        return out

    sqlite_store.SQLiteDatabase._commit_group = counted_group  # type: ignore[method-assign]
    sqlite_store.SQLiteDatabase.write_inline = counted_inline  # type: ignore[method-assign]

    def start(*_: Any) -> None:
        state.update(on=1.0, area=0.0, t=time.monotonic(), requests=0, groups=0, inline=0,
                     peak=state["inflight"], started=time.monotonic())

    def stop(*_: Any) -> None:
        tick(0)
        state["on"] = 0.0
        state["seconds"] = time.monotonic() - state["started"]
        Path(os.environ["FORWARD_DEPTH_OUT"]).write_text(json.dumps(state))

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    target = str(HERE / "serve_with_noop.py")
    sys.argv = [target, *argv]
    runpy.run_path(target, run_name="__main__")


def main() -> None:
    sys.path[:0] = [str(ROOT), str(HERE), str(ROOT / "benchmarks")]
    import pipeline_capacity as pc
    from load import TOKEN, call_body, call_headers, check_call, wrk
    from tests.conftest import free_port, stop_process, wait_http

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--connections", default="16,64")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args, rest = ap.parse_known_args()
    if args.serve:
        serve(rest)
        return
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-depth-"))
    port = free_port()
    direct = f"http://127.0.0.1:{port}/mcp"
    up = pc.start([pc.PY, pc.TOOLBOX, "--http", str(port)], direct)
    cfg = tmp / "c.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"url": direct, "protocol": "modern"}}, "sentinel": {
        "data_dir": str(tmp / "data"), "builtins": [], "rulebases": [str(ROOT / "rulebases" / "default.pl")],
        "http": {"token": TOKEN}}}))
    out, gport = tmp / "depth.json", free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)]),
           "FORWARD_DEPTH_OUT": str(out), "PYTHONWARNINGS": "ignore"}
    gw = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve", "-c", str(cfg), "serve",
                           "--http", f"127.0.0.1:{gport}"], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{gport}/mcp"
    try:
        wait_http(f"http://127.0.0.1:{gport}/healthz", proc=gw, timeout=90)
        check_call(url, "tb__noop")
        body, headers = call_body("tb__noop"), call_headers("tb__noop")
        dbody, dheaders = call_body("noop"), call_headers("noop", token=None)
        for conns in (int(c) for c in args.connections.split(",")):
            d = wrk(direct, dbody, dheaders, connections=conns, seconds=args.seconds, server_pid=up.pid)
            wrk(url, body, headers, connections=conns, seconds=1, server_pid=gw.pid)  # warm up
            out.unlink(missing_ok=True)
            os.kill(gw.pid, signal.SIGUSR1)
            r = wrk(url, body, headers, connections=conns, seconds=args.seconds, server_pid=gw.pid)
            os.kill(gw.pid, signal.SIGUSR2)
            while not out.exists():
                time.sleep(0.05)
            time.sleep(0.1)
            s = json.loads(out.read_text())
            calls = max(s["requests"], 1)
            commits = s["groups"] + s["inline"]
            print(f"{conns:3d} clients: direct {d.rate:6.0f}/s, through {r.rate:6.0f}/s (ratio "
                  f"{r.rate / max(d.rate, 1e-9):.2f}); at the upstream on average "
                  f"{s['area'] / s['seconds']:.1f} of {conns} calls (peak {s['peak']:.0f}); "
                  f"commits a call {commits / calls:.2f} "
                  f"({s['inline'] / calls:.2f} inline), rows a commit {2 * calls / max(commits, 1):.1f}; "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        stop_process(gw)
        stop_process(up)


if __name__ == "__main__":
    main()
