"""The gateway's own work a call, by thread, for two trees alternated (issue 21, the hot path).

Wall time on a shared 2-core machine moves by a third between runs; what a call costs the gateway in CPU and
in wake-ups moves much less. For each tree (``--base`` and ``--tree``) this starts two gateways, one served
over stdio and one over streamable HTTP, each forwarding to a test toolbox over stdio (the no-op), the audit
in ``--sync`` mode with its data under ``--data`` (the disk by default), the fail-safe default guard or
``--rulebase``'s. A raw-wire client (a blocking pipe or socket: its own cost is tiny and the same for both
trees) makes sequential 2026-07-28 no-op calls; blocks of ``--block`` calls alternate between the four
gateways until each has had ``--calls``. Around every block it reads, for each gateway thread,
``/proc/<pid>/task/<tid>/status`` (voluntary and non-voluntary context switches) and ``schedstat`` (ns on a
CPU), and prints per call:

- ``loop``: the event loop's thread (the process's main thread);
- ``others``: every other thread summed (the Prolog engine thread, the audit writer, executor workers): a
  call handed to one of them shows ~2 voluntary switches (its wake-up and its sleep) and its CPU here;

and the round trip's p50 beside them. Python 3.11 does not name OS threads: ``--by-thread`` lists the
busiest threads by id (``py-spy dump --pid`` names them; do not sample while counting: its stops are
counted as switches of every thread). ``--batch-upstream`` (an experiment) puts the tree's upstreams under
``SCHED_BATCH``, whose wake-ups do not preempt the running task: does the woken upstream take the
gateway's CPU?

Usage: python benchmarks/harness/thread_work_ab.py --base /work/main [--tree DIR] [--calls 2000]
       [--block 200] [--sync process] [--data /tmp] [--by-thread] [--batch-upstream] [--rulebase FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import os
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
from front_wakeups import Http, Stdio  # noqa: E402
from load import TOKEN  # noqa: E402
from tests.conftest import free_port, stop_process, wait_http  # noqa: E402

TOOLBOX = str(ROOT / "tests" / "gateway" / "toolbox_server.py")
Counts = dict[str, tuple[int, int, int]]  # tid -> voluntary, non-voluntary switches, ns on a CPU


def threads(pid: int) -> Counts:
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
            run = int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
        except OSError:  # the thread ended meanwhile
            continue
        out[tid] = (int(status.split("\nvoluntary_ctxt_switches:")[1].split()[0]),
                    int(status.split("\nnonvoluntary_ctxt_switches:")[1].split()[0]), run)
    return out


class Fresh:
    """A raw-wire HTTP client that opens its connection again at each block: a kept-alive connection left
    idle while the other gateways take their turns is closed by the front's idle bound (408)."""

    def __init__(self, port: int, pid: int) -> None:
        self.port, self.pid = port, pid
        self.http: Http | None = None

    def block(self) -> None:
        if self.http is not None:
            self.http.sock.close()
        self.http = Http(self.port, "tb__noop", self.pid)

    def call(self) -> None:
        if self.http is None:
            self.block()
        assert self.http is not None
        self.http.call()


def thread_names(pid: int) -> dict[str, str]:
    """Thread id -> Python thread name, from ``py-spy dump`` (after the counting: its stops are switches);
    empty when py-spy is not installed."""
    spy = Path(sys.executable).with_name("py-spy")
    if not spy.exists():
        return {}
    out = subprocess.run([str(spy), "dump", "--pid", str(pid)], capture_output=True, text=True,
                         timeout=60).stdout
    return dict(re.findall(r'^Thread (\d+) \([^)]*\): "([^"]*)"', out, re.M))


def upstreams_of(pid: int) -> list[int]:
    """The test toolboxes ``pid`` started (its descendants running ``toolbox_server.py``: each under the
    gateway's reaper)."""
    parent, argv = {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
                argv[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes()
            except (OSError, IndexError, ValueError):
                continue
    found = []
    for child, cmd in argv.items():
        up = parent.get(child)
        while up is not None and up != pid and up > 1:
            up = parent.get(up)
        if up == pid and b"toolbox_server.py" in cmd:
            found.append(child)
    return found


def gateways(tree: Path, sync: str, data: str, rulebase: str | None
             ) -> tuple[list[subprocess.Popen[Any]], dict[str, Any]]:
    tmp = Path(tempfile.mkdtemp(prefix="thread-work-", dir=data))
    procs: list[subprocess.Popen[Any]] = []
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(tree)}
    made: dict[str, Any] = {}
    for front in ("stdio", "HTTP"):
        cfg = tmp / f"{front}.json"
        sentinel: dict[str, Any] = {"data_dir": str(tmp / front), "builtins": [], "audit": {"sync": sync},
                                    "http": {"token": TOKEN}}
        if rulebase:  # every call decided by SWI-Prolog (else the fail-safe default guard, in Python)
            sentinel["rulebases"] = [str(Path(rulebase).resolve())]
        cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
                                   "sentinel": sentinel}))
        cfg.chmod(0o600)
        serve = [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve"]
        if front == "stdio":
            made[front] = Stdio(serve, env, "tb__noop", cwd=tree)
            procs.append(made[front].proc)
        else:
            port = free_port()
            procs.append(subprocess.Popen([*serve, "--http", f"127.0.0.1:{port}"], env=env, cwd=tree,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          start_new_session=True))
            wait_http(f"http://127.0.0.1:{port}/healthz", proc=procs[-1], timeout=90)
            made[front] = Fresh(port, procs[-1].pid)
    return procs, made


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True)
    ap.add_argument("--tree", default=str(ROOT))
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--block", type=int, default=200)
    ap.add_argument("--sync", default="process", choices=("full", "process"))
    ap.add_argument("--data", default="/tmp")
    ap.add_argument("--by-thread", action="store_true")
    ap.add_argument("--rulebase", help="a Prolog rulebase every call is decided by (rulebases/default.pl)")
    ap.add_argument("--batch-upstream", action="store_true",
                    help="an experiment: the tree's upstreams under SCHED_BATCH (a woken batch task does not "
                         "preempt the running one: does the woken upstream take the gateway's CPU?)")
    args = ap.parse_args()
    trees = {"base": Path(args.base).resolve(), "tree": Path(args.tree).resolve()}
    procs: list[subprocess.Popen[Any]] = []
    targets: dict[str, Any] = {}
    try:
        for side, tree in trees.items():
            started, made = gateways(tree, args.sync, args.data, args.rulebase)
            procs += started
            targets |= {f"{side} {front}": t for front, t in made.items()}
        for target in targets.values():
            if isinstance(target, Fresh):
                target.block()
            for _ in range(200):  # warm up: every first-call cost paid
                target.call()
        if args.batch_upstream:
            for name, target in targets.items():
                if name.startswith("tree"):
                    for child in upstreams_of(target.pid):
                        os.sched_setscheduler(child, os.SCHED_BATCH, os.sched_param(0))
        load0 = os.getloadavg()[0]
        work: dict[str, dict[str, list[int]]] = {name: {} for name in targets}
        times: dict[str, list[float]] = {name: [] for name in targets}
        while min(len(t) for t in times.values()) < args.calls:
            for name, target in targets.items():
                if isinstance(target, Fresh):
                    target.block()
                before = threads(target.pid)
                for _ in range(args.block):
                    t0 = time.perf_counter()
                    target.call()
                    times[name].append((time.perf_counter() - t0) * 1e6)
                after = threads(target.pid)
                for tid, now in after.items():
                    was = before.get(tid, (0, 0, 0))
                    acc = work[name].setdefault(tid, [0, 0, 0])
                    for i in range(3):
                        acc[i] += now[i] - was[i]
        names = {name: thread_names(t.pid) for name, t in targets.items()} if args.by_thread else {}
    finally:
        for proc in reversed(procs):
            stop_process(proc)
    print(f"\n{args.calls} sequential raw-wire 2026-07-28 no-op calls a gateway, blocks of {args.block} "
          f"alternated; audit sync {args.sync!r}, data under {args.data}; load {load0:.1f} -> "
          f"{os.getloadavg()[0]:.1f}\nper call: voluntary / non-voluntary switches, CPU us\n")
    print(f"{'gateway':12} {'p50 us':>7} | {'loop vol':>8} {'invol':>6} {'CPU':>7} | {'others vol':>10} "
          f"{'invol':>6} {'CPU':>6}")
    for name, per in work.items():
        pid = str(targets[name].pid)
        n = len(times[name])
        loop = per.get(pid, [0, 0, 0])
        rest = [sum(v[i] for t, v in per.items() if t != pid) for i in range(3)]
        print(f"{name:12} {statistics.median(times[name]):7.0f} | {loop[0] / n:8.2f} {loop[1] / n:6.2f} "
              f"{loop[2] / n / 1e3:7.1f} | {rest[0] / n:10.2f} {rest[1] / n:6.2f} {rest[2] / n / 1e3:6.1f}")
        if args.by_thread:
            for tid, v in sorted(per.items(), key=lambda kv: -kv[1][2])[:6]:
                print(f"    {tid:>8} {names[name].get(tid, '?')[:24]:24} {v[0] / n:6.2f} {v[1] / n:6.2f} "
                      f"{v[2] / n / 1e3:7.1f}")


if __name__ == "__main__":
    main()
