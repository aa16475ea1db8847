"""Does the upstream do more work a call behind Sentinel than called directly, and why does it take more CPU
a call there? (issue 21, the upstream's share of the added latency; branch perf-behind8.)

``counts``: counts instead of times (a count does not move with the shared machine's load): the test toolbox
runs under ``sys.setprofile`` (every thread), counting the Python and C functions it calls, read before and
after N calls a side. ``cpu``: the toolboxes not profiled, blocks of 25 calls alternated between the sides;
per side the toolbox's CPU a call (all its threads, ``schedstat``), its main thread's, the time its threads
waited on a run queue a call, its voluntary switches a call and the client's round trip p50.

Sides: the toolbox behind a gateway of this tree (a raw JSON-lines 2026-07-28 client; ``--base DIR``: and
behind one of DIR's, in ``cpu``), each gateway in a session of its own as the SDK's ``stdio_client`` starts
it or in this harness's session as a host that does not detach it (``--gateway-session``); and the toolbox
spoken to directly as the gateway speaks to it (2025-11-25 handshake, a ``progressToken``): at once, with
the client sleeping ``--pause-us`` between calls, with the client spinning that long, in a session of its
own (``setsid``), and directly in 2026-07-28.

Usage: python benchmarks/harness/upstream_call_counts.py [counts|cpu] [--calls 300] [--base /work/main]
       [--gateway-session own|shared]
       (internal: upstream_call_counts.py --box OUT|-  runs the toolbox, counted into OUT or not)
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import runpy
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
from stdio_call_trace import Client  # noqa: E402

TOOLBOX = str(ROOT / "tests" / "gateway" / "toolbox_server.py")


def counted_toolbox(out: str) -> None:
    if out == "-":  # not counted: for the CPU and switch figures
        sys.argv = [TOOLBOX]
        runpy.run_path(TOOLBOX, run_name="__main__")
        return
    counts: collections.Counter[str] = collections.Counter()

    def prof(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            code = frame.f_code
            counts[f"{code.co_filename.rsplit('site-packages/', 1)[-1]}:{code.co_name}"] += 1
        elif event == "c_call":
            counts[f"C:{getattr(arg, '__qualname__', arg)}"] += 1

    def dump(*_: object) -> None:
        snapshot = dict(counts)
        Path(out + ".tmp").write_text(json.dumps(snapshot))
        os.replace(out + ".tmp", out)

    signal.signal(signal.SIGUSR1, dump)
    threading.setprofile(prof)
    sys.setprofile(prof)
    sys.argv = [TOOLBOX]
    runpy.run_path(TOOLBOX, run_name="__main__")


def read_counts(pid: int, out: str) -> dict[str, int]:
    before = os.stat(out).st_mtime_ns if os.path.exists(out) else 0
    os.kill(pid, signal.SIGUSR1)
    for _ in range(500):
        if os.path.exists(out) and os.stat(out).st_mtime_ns != before:
            try:
                return json.loads(Path(out).read_text())  # type: ignore[no-any-return]
            except ValueError:
                pass
        time.sleep(0.01)
    raise SystemExit("the counted toolbox did not dump its counts")


def switches_and_ns(pid: int) -> tuple[int, int, int, int]:
    """The process's voluntary context switches, CPU ns (all its threads), its main thread's CPU ns and the
    ns its threads waited on a run queue."""
    vol = ns = main = queued = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            status = Path(f"/proc/{pid}/task/{task}/status").read_text()
            sched = Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()
        except OSError:
            continue
        vol += int(status.split("\nvoluntary_ctxt_switches:")[1].split()[0])
        ns += int(sched[0])
        queued += int(sched[1])
        if task == str(pid):
            main += int(sched[0])
    return vol, ns, main, queued


def counted_under(gateway_pid: int) -> int:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if b"--box" in cmd and b"upstream_reaper" not in cmd:
                parent = int(stat[1])
                grand = int(Path(f"/proc/{parent}/stat").read_text().rsplit(")", 1)[1].split()[1])
                if gateway_pid in (parent, grand):
                    return int(entry)
    raise SystemExit("no counted toolbox under the gateway")


class Handshake:
    """The toolbox spoken to as the gateway speaks to it: the 2025-11-25 handshake, a progressToken a call."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.p = proc
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"sampling": {}, "roots": {"listChanged": True}},
            "clientInfo": {"name": "counts", "version": "1"}}})
        assert self.p.stdout is not None
        self.p.stdout.readline()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.rid = 1 << 40

    def send(self, message: dict[str, Any]) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self.p.stdin.flush()

    def call(self) -> None:
        self.rid += 1
        self.send({"jsonrpc": "2.0", "id": self.rid, "method": "tools/call", "params": {
            "name": "noop", "arguments": {}, "_meta": {"progressToken": self.rid}}})
        assert self.p.stdout is not None
        if b'"result"' not in self.p.stdout.readline():
            raise SystemExit("the toolbox did not answer")


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--box":
        counted_toolbox(sys.argv[2])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("counts", "cpu"), nargs="?", default="counts")
    ap.add_argument("--calls", type=int, default=300, help="counts: calls a side; cpu: blocks of 25 a side")
    ap.add_argument("--pause-us", type=int, default=1000, help="the paused direct side's sleep between calls")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--gateway-session", choices=("own", "shared"), default="own",
                    help="own: each gateway in a session of its own, as the SDK's stdio_client starts it; "
                         "shared: in this harness's session")
    ap.add_argument("--base", help="cpu: another source tree (/work/main), its gateway's toolbox a side too")
    args = ap.parse_args()
    counting = args.mode == "counts"
    work = Path(tempfile.mkdtemp(prefix="upstream-counts-"))
    sides: tuple[str, ...] = ("behind", "direct 2025", "direct 2025 paused", "direct 2025 busy",
                              "direct 2025 setsid", "direct 2026")
    if args.base and not counting:
        sides = ("behind base", *sides)
    outs = {s: str(work / f"{s.replace(' ', '-')}.json") if counting else "-" for s in sides}
    box = [sys.executable, __file__, "--box"]
    cfg = work / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable,
                                                    "args": [__file__, "--box", outs["behind"]]}},
                               "sentinel": {"data_dir": str(work / "state"), "builtins": []}}))
    cfg.chmod(0o600)
    pipes: dict[str, Any] = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE,
                             "stderr": subprocess.DEVNULL}
    # the gateways as an MCP client would start them (the SDK's stdio_client: a session of their own, so no
    # controlling terminal, whatever this harness has), or in this harness's session
    trees = {"behind": ROOT, **({"behind base": Path(args.base)} if "behind base" in sides else {})}
    procs = {side: subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve"],
                                    cwd=tree, **pipes,
                                    start_new_session=args.gateway_session == "own",
                                    env={**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(tree)})
             for side, tree in trees.items()}
    procs.update({s: subprocess.Popen([*box, outs[s]], **pipes, start_new_session=s.endswith("setsid"))
                  for s in sides if s not in trees})
    load0 = os.getloadavg()[0]
    pause = args.pause_us / 1e6
    try:
        paused = Handshake(procs["direct 2025 paused"]).call

        def paused_call() -> None:
            time.sleep(pause)
            paused()

        busy = Handshake(procs["direct 2025 busy"]).call

        def busy_call() -> None:  # the client keeps a core busy between calls, as the gateway would
            end = time.perf_counter() + pause
            while time.perf_counter() < end:
                pass
            busy()

        callers = {**{s: Client(procs[s], "modern").call for s in trees},
                   "direct 2025": Handshake(procs["direct 2025"]).call, "direct 2025 paused": paused_call,
                   "direct 2025 busy": busy_call,
                   "direct 2025 setsid": Handshake(procs["direct 2025 setsid"]).call,
                   "direct 2026": Client(procs["direct 2026"], "modern").call}
        pids = {s: p.pid for s, p in procs.items()}
        for s in trees:
            pids[s] = counted_under(procs[s].pid)
        for call in callers.values():
            for _ in range(100):
                call()
        if counting:
            per: dict[str, dict[str, float]] = {}
            for side, call in callers.items():
                c0 = read_counts(pids[side], outs[side])
                for _ in range(args.calls):
                    call()
                c1 = read_counts(pids[side], outs[side])
                per[side] = {k: (v - c0.get(k, 0)) / args.calls for k, v in c1.items() if v != c0.get(k, 0)}
        else:
            cpu: dict[str, list[float]] = {s: [] for s in sides}
            vol: dict[str, list[float]] = {s: [] for s in sides}
            main_cpu: dict[str, list[float]] = {s: [] for s in sides}
            waited: dict[str, list[float]] = {s: [] for s in sides}
            wall: dict[str, list[float]] = {s: [] for s in sides}
            for r in range(args.calls):
                for side in sides if r % 2 == 0 else sides[::-1]:
                    v0, n0, m0, q0 = switches_and_ns(pids[side])
                    for _ in range(25):
                        t0 = time.perf_counter()
                        callers[side]()
                        wall[side].append(time.perf_counter() - t0)
                    v1, n1, m1, q1 = switches_and_ns(pids[side])
                    cpu[side].append((n1 - n0) / 25e3)
                    vol[side].append((v1 - v0) / 25)
                    main_cpu[side].append((m1 - m0) / 25e3)
                    waited[side].append((q1 - q0) / 25e3)
    finally:
        for p in procs.values():
            if p.stdin:
                p.stdin.close()
        for p in procs.values():
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
    load = f"load average {load0:.1f} -> {os.getloadavg()[0]:.1f}"
    if not counting:
        print(f"the toolbox, {args.calls} x 25 calls a side alternated (median of blocks); {load}; "
              f"gateways in a session: {args.gateway_session}")
        print(f"{'side':20} {'CPU us/call':>12} {'main thread':>12} {'run-queue wait':>15} "
              f"{'vol. switches/call':>19} {'round trip p50 ms':>18}")
        for side in sides:
            print(f"{side:20} {statistics.median(cpu[side]):12.1f} {statistics.median(main_cpu[side]):12.1f} "
                  f"{statistics.median(waited[side]):15.1f} {statistics.median(vol[side]):19.2f} "
                  f"{statistics.median(wall[side]) * 1e3:18.3f}")
        return
    print(f"functions the toolbox calls a call ({args.calls} calls a side after 100; {load}):")
    for side, c in per.items():
        print(f"  {side:20} {sum(c.values()):9.1f}   loop turns (epoll.poll) {c.get('C:epoll.poll', 0):6.2f}"
              f"   self-pipe reads {c.get('C:socket.recv', 0):6.2f}")
    keys = set().union(*per.values())
    rows = sorted(keys, key=lambda k: -abs(per["behind"].get(k, 0) - per["direct 2025"].get(k, 0)))
    print(f"\n{'function':80} {'behind':>8} {'d2025':>8} {'d25 pause':>9} {'d25 busy':>8} {'setsid':>8} "
          f"{'d2026':>8}")
    for k in rows[:args.top]:
        print(f"{k[-80:]:80} " + " ".join(f"{per[s].get(k, 0):8.2f}" for s in sides))


if __name__ == "__main__":
    main()
