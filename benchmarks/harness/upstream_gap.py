"""The real-upstream row's gap taken apart (issue 21: through Sentinel >= 0.9x the direct rate of a real
Python MCP upstream, 16 HTTP clients, ``"protocol": "modern"``), in one run, rows alternated round by round:

- ``direct``: wrk straight to the test toolbox (streamable HTTP, 2026-07-28 calls);
- ``through``: the same toolbox behind a gateway of this tree (default guard, durable audit on disk);
- ``through, audit on tmpfs``: the same gateway with its data dir on ``/dev/shm`` (a commit's sync nearly
  free): what the two durable commits a call waits for cost the row, as latency rather than CPU;
- ``in-process no-op``: a gateway of the same pipeline answering its own no-op built-in (no forward): what
  the forward adds to the gateway's CPU a call;
- each at 16 connections, and direct and through at 64 too: whether 16 clients leave the path short of calls.

For each row, per call: the CPU (user + system) of the gateway's event-loop thread and of its other threads
(the audit writer, the engine), of the upstream's event-loop thread and of its other threads (the SDK runs a
sync tool on a worker thread), their context switches, wrk's CPU, and the neighbours' share of the machine.
From the CPU a call, the ratio two idle cores would give: through, both processes and wrk on two cores and
neither event loop past one (min(1/loop, 1/upstream loop, 2/total)); direct, the upstream alone.

``--base TREE``: instead, A/B: rows direct / through the gateway of TREE (e.g. ``/work/main``) / through this
tree's, both fronting the one toolbox, alternated round by round (the upstream's CPU a call through each
gateway is the figure a change to how calls reach it moves).

Counts and CPU a call are what a shared machine moves least; the rates are read within a round.
Usage: python benchmarks/harness/upstream_gap.py [--seconds 5] [--rounds 2] [--no-64] [--base TREE]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(HERE), str(ROOT / "benchmarks")]
import pipeline_capacity as pc  # noqa: E402
from load import call_body, call_headers, check_call, wrk  # noqa: E402
from tests.conftest import free_port, stop_process  # noqa: E402

CLK = os.sysconf("SC_CLK_TCK")
FIELDS = ("user", "sys", "vol", "invol")


def _stat(path: str) -> tuple[float, float]:
    fields = Path(path).read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / CLK, int(fields[12]) / CLK


def threads(pid: int) -> dict[str, list[float]]:
    """{"loop" | "other": [user s, system s, context switches]} of a process: its main thread (the event
    loop) and the rest, taken from the process's total (which keeps the time of threads that have ended: the
    SDK's worker threads come and go); the switches are the loop thread's own."""
    user, system = _stat(f"/proc/{pid}/stat")
    loop_user, loop_sys = _stat(f"/proc/{pid}/task/{pid}/stat")
    status = Path(f"/proc/{pid}/task/{pid}/status").read_text()
    switches = sum(int(n) for n in re.findall(r"^(?:non)?voluntary_ctxt_switches:\s+(\d+)", status, re.M))
    return {"loop": [loop_user, loop_sys, switches], "other": [user - loop_user, system - loop_sys, 0.0]}


def upstream_connections(pid: int, port: int) -> int:
    """Established TCP connections process ``pid`` holds to ``port`` (its sockets' inodes in the kernel's
    tables): the gateway's pool to the upstream during the load."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if cols[3] == "01" and int(cols[2].rsplit(":", 1)[1], 16) == port and cols[9] in inodes:
                count += 1
    return count


def measure(url: str, tool: str, seconds: float, connections: int, gateway: int | None, upstream: int | None,
            token: bool, port: int) -> dict[str, float]:
    """One wrk run and, per call, each process's threads' CPU (ms) and switches."""
    kw = {} if token else {"token": None}
    check_call(url, tool, **kw)
    body, headers = call_body(tool), call_headers(tool, **kw)
    server = gateway or upstream
    wrk(url, body, headers, connections=connections, seconds=1, server_pid=server)  # warm up
    pids = {"gw": gateway, "up": upstream}
    before = {k: threads(p) for k, p in pids.items() if p}
    held: list[int] = []
    probe = threading.Timer(seconds / 2, lambda: held.append(upstream_connections(gateway, port)) if gateway
                            and upstream else None)
    probe.start()
    r = wrk(url, body, headers, connections=connections, seconds=seconds, server_pid=server)
    after = {k: threads(p) for k, p in pids.items() if p}
    probe.join()
    n = max(r.requests, 1)
    row = {"rate": r.rate, "p50": r.p50_ms, "client": 1000 * r.client_cpu / max(r.rate, 1e-9),
           "idle": r.machine_idle, "load": os.getloadavg()[0],
           "connections": float(held[0]) if held else float("nan")}
    busy = 0.0
    for who, by_thread in after.items():
        for part, values in by_thread.items():
            d = [b - a for a, b in zip(before[who][part], values)]
            row[f"{who} {part}"] = 1000 * (d[0] + d[1]) / n
            row[f"{who} {part} sys"] = 1000 * d[1] / n
            if part == "loop":
                row[f"{who} loop switches"] = d[2] / n
            busy += (d[0] + d[1]) / seconds
    row["neighbours"] = max(0.0, (1 - r.machine_idle) * (os.cpu_count() or 1) - busy - r.client_cpu)
    return row


def bound(row: dict[str, float]) -> float:
    """Calls per ms two idle cores allow from the row's CPU a call (neither event loop past one core)."""
    loops = [row[k] for k in ("gw loop", "up loop") if row.get(k)]
    total = sum(row.get(k, 0.0) for k in ("gw loop", "gw other", "up loop", "up other")) + row["client"]
    return min([1 / x for x in loops] + [2 / total])


def show(name: str, row: dict[str, float]) -> str:
    parts = [f"{name:34s} {row['rate']:6.0f}/s p50 {row['p50']:6.1f} ms"]
    for who in ("gw", "up"):
        if f"{who} loop" in row:
            parts.append(f"{who}: loop {row[f'{who} loop']:.3f} (sys {row[f'{who} loop sys']:.3f}) "
                         f"other {row[f'{who} other']:.3f} ms, loop switches "
                         f"{row[f'{who} loop switches']:.2f}")
    parts.append(f"wrk {row['client']:.3f} ms; neighbours {row['neighbours']:.2f} core; "
                 f"load {row['load']:.1f}"
                 + (f"; the gateway's connections to the upstream {row['connections']:.0f}"
                    if row["connections"] == row["connections"] else ""))
    return "  ".join(parts)


Plan = list[tuple[str, str, str, int, int | None, int | None, bool]]


def _gap_plan(args: argparse.Namespace, tmp: Path, shm: Path, server: dict, gateways: list, direct: str,
              up: int) -> Plan:
    disk, disk_url = pc.sentinel(tmp, server, [], "disk")
    gateways.append(disk)
    ram, ram_url = pc.sentinel(shm, server, [], "tmpfs")
    gateways.append(ram)
    noop, noop_url = pc.sentinel(tmp, {}, ["bench"], "noop")
    gateways.append(noop)
    plan: Plan = [("direct, 16", direct, "noop", 16, None, up, False),
                  ("through, 16", disk_url, "tb__noop", 16, disk.pid, up, True),
                  ("through, 16, audit on tmpfs", ram_url, "tb__noop", 16, ram.pid, up, True),
                  ("in-process no-op, 16", noop_url, "bench__noop", 16, noop.pid, None, True)]
    if not args.no_64:
        plan += [("direct, 64", direct, "noop", 64, None, up, False),
                 ("through, 64", disk_url, "tb__noop", 64, disk.pid, up, True)]
    return plan


def _ab_plan(args: argparse.Namespace, tmp: Path, server: dict, gateways: list, direct: str, up: int) -> Plan:
    """direct, through the base tree's gateway, through this tree's: each gateway with its own sources first
    on the path (and its own ``.venv`` when it has one), the same rulebase, audit on the disk."""
    urls = {}
    for name, tree in (("base", Path(args.base).resolve()), ("branch", ROOT)):
        venv_python = tree / ".venv" / "bin" / "python"
        pc.PY = str(venv_python) if venv_python.exists() else sys.executable
        pc.HARNESS = tree / "benchmarks" / "harness"
        pc.ENV = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(tree)}
        proc, url = pc.sentinel(tmp, server, [], name)
        gateways.append(proc)
        urls[name] = (proc.pid, url)
    plan: Plan = []
    for conns in (16,) if args.no_64 else (16, 64):
        plan += [(f"direct, {conns}", direct, "noop", conns, None, up, False)]
        plan += [(f"through {name}, {conns}", url, "tb__noop", conns, pid, up, True)
                 for name, (pid, url) in urls.items()]
    return plan


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-64", action="store_true", help="leave out the 64-connection rows")
    ap.add_argument("--base", help="A/B: the other source tree's gateway beside this tree's")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-gap-"))
    ram_dir = "/dev/shm" if Path("/dev/shm").is_dir() else None
    shm = Path(tempfile.mkdtemp(prefix="sentinel-gap-", dir=ram_dir))
    port = free_port()
    direct = f"http://127.0.0.1:{port}/mcp"
    up = pc.start([pc.PY, pc.TOOLBOX, "--http", str(port)], direct)
    gateways = []
    try:
        server = {"tb": {"url": direct, "protocol": "modern"}}
        if args.base:
            plan = _ab_plan(args, tmp, server, gateways, direct, up.pid)
        else:
            plan = _gap_plan(args, tmp, shm, server, gateways, direct, up.pid)
        rows: dict[str, list[dict[str, float]]] = {name: [] for name, *_ in plan}
        for i in range(args.rounds):
            print(f"round {i + 1}", flush=True)
            # every other round backwards: no row always runs right after the same one
            for name, url, tool, conns, gw, upstream, token in (plan if i % 2 == 0 else plan[::-1]):
                rows[name].append(measure(url, tool, args.seconds, conns, gw, upstream, token, port))
                print("  " + show(name, rows[name][-1]), flush=True)
    finally:
        for g in gateways:
            stop_process(g)
        stop_process(up)
    print("\nmedians over the rounds; ratio: the row's rate / the direct rate of its round and connections")
    for name in rows:
        med = {k: statistics.median(r[k] for r in rows[name]) for k in rows[name][0]}
        conns = name.split(", ")[1]
        base = rows.get(f"direct, {conns}")
        extra = ""
        if base and name.startswith("through"):
            ratio = statistics.median(r["rate"] / max(d["rate"], 1e-9) for r, d in zip(rows[name], base))
            idle = statistics.median(bound(r) / bound(d) for r, d in zip(rows[name], base))
            extra = f"  ratio {ratio:.2f}; on 2 idle cores (CPU a call) {idle:.2f}"
        print(show(name, med) + extra)


if __name__ == "__main__":
    main()
