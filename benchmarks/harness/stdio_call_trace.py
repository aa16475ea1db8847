"""Where ONE sequential stdio call's added time goes, stage by stage (issue 21, added-latency goal): a raw
JSON-lines client calls the test toolbox's no-op through the gateway N times in a row; the gateway runs under
this file (``--serve``), which stamps each stage's wall clock (CLOCK_MONOTONIC, the client's clock too) and
the event loop thread's CPU clock. Per stage it prints the median wall time, the loop thread's CPU in it, and
the rest (a wait: the loop asleep in ``epoll``, another process or thread running, an fsync in the kernel).
Then, over a second run of N calls without stamps, the voluntary context switches per call of each of the
gateway's threads and of the upstream's, and each process's CPU per call.

Stages, in the order one call passes them (``wake``: ``epoll`` returned with an event on the loop's thread):
client write -> wake -> front bytes read (``feed_data``) -> line parsed (``take``) -> call task running ->
``Gateway.run`` -> route -> validate -> guard -> decision row committed -> upstream line written -> wake ->
upstream bytes read -> call resumed -> answer row committed -> answer written -> client read.
Usage: python benchmarks/harness/stdio_call_trace.py [--calls 500] [--era modern|legacy]
(``TMPDIR=/dev/shm``: the audit's fsyncs on tmpfs; ``FINE_ROW=1``: the audit row's pieces stamped too.)
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TOOLBOX = ROOT / "tests" / "gateway" / "toolbox_server.py"
MODERN = "2026-07-28"
WARM = 100
TICK = os.sysconf("SC_CLK_TCK")


# (stage, its first stamp, its last stamp)
GROUPS = (
    ("client's write -> the gateway's read (wake-up)", "client write", "front bytes"),
    ("front: parse, lean take, task, SDK kernel, Front.call_tool", "front bytes", "run >"),
    ("route + validate", "run >", "decide >"),
    ("guard (the default guard)", "decide >", "decision row >"),
    ("decision row: built, committed (SQLite, fsync)", "decision row >", "decision row <"),
    ("forward: the upstream's line built and written", "decision row <", "upstream write <"),
    ("upstream: the toolbox's round trip, the loop's wake-up", "upstream write <", "upstream bytes"),
    ("answer read (SDK reader, tap), result checks", "upstream bytes", "answer row >"),
    ("answer row: built, committed (SQLite, fsync)", "answer row >", "answer row <"),
    ("answer out: stamped, encoded, written, the client's read", "answer row <", "client read"),
)


def serve(out: str, argv: list[str]) -> None:
    """The gateway with its stages stamped; the stamps go to ``out`` on SIGUSR1."""
    import asyncio
    import functools
    import runpy
    import selectors

    stamps: list[tuple[str, int, int]] = []
    now, cpu = time.perf_counter_ns, time.thread_time_ns
    on = [bool(os.environ.get("STAMPS", "1") == "1")]

    def stamp(label: str) -> None:
        if on[0]:
            stamps.append((label, now(), cpu()))

    def around(cls: Any, name: str, label: str, enter: bool = True, leave: bool = True) -> None:
        f = getattr(cls, name)
        if asyncio.iscoroutinefunction(f):
            @functools.wraps(f)
            async def w(*a: Any, **k: Any) -> Any:
                if enter:
                    stamp(f"{label} >")
                try:
                    return await f(*a, **k)
                finally:
                    if leave:
                        stamp(f"{label} <")
        else:
            @functools.wraps(f)
            def w(*a: Any, **k: Any) -> Any:  # type: ignore[misc]
                if enter:
                    stamp(f"{label} >")
                try:
                    return f(*a, **k)
                finally:
                    if leave:
                        stamp(f"{label} <")
        setattr(cls, name, w)

    select = selectors.EpollSelector.select

    def traced_select(self: Any, timeout: float | None = None) -> Any:
        events = select(self, timeout)
        if events and timeout != 0:
            stamp("wake")
        return events

    selectors.EpollSelector.select = traced_select  # type: ignore[method-assign]
    feed = asyncio.StreamReader.feed_data
    from sentinel_mcp.gateway import lean_stdio

    # a tree that takes a lone answer as the pipe gives it (``_TappedStdout.at_once``): its bytes stamped
    # there, where every upstream read passes first
    tapped = getattr(lean_stdio, "_TappedStdout", None)
    at_once = getattr(tapped, "at_once", None)

    # the same for the client's lone line (``stdio_transport._FrontTake.at_once``)
    from sentinel_mcp.gateway import stdio_transport

    front_take = getattr(stdio_transport, "_FrontTake", None)
    front_at_once = getattr(front_take, "at_once", None)

    def traced_feed(self: Any, data: bytes) -> None:
        if self._limit == 4 * 64 * 1024:
            if front_at_once is None:
                stamp("front bytes")
        elif at_once is None:
            stamp("upstream bytes")
        feed(self, data)

    asyncio.StreamReader.feed_data = traced_feed  # type: ignore[method-assign]
    if at_once is not None:
        def traced_at_once(self: Any, data: bytes) -> bool:
            stamp("upstream bytes")
            return at_once(self, data)  # type: ignore[no-any-return]

        tapped.at_once = traced_at_once  # type: ignore[union-attr]
    if front_at_once is not None:
        def traced_front(self: Any, data: bytes) -> bool:
            stamp("front bytes")
            return front_at_once(self, data)  # type: ignore[no-any-return]

        front_take.at_once = traced_front  # type: ignore[union-attr]

    from sentinel_mcp.gateway.call_record import CallRecord
    from sentinel_mcp.gateway.core import Gateway
    from sentinel_mcp.gateway.stdio_lean_calls import StdioLeanCalls
    from sentinel_mcp.gateway.stdio_wire_out import WireOut
    from sentinel_mcp.storage.sqlite import SQLiteDatabase

    around(StdioLeanCalls, "take", "parsed", leave=False)
    around(StdioLeanCalls, "_serve", "task", leave=False)
    around(StdioLeanCalls, "_serve_legacy", "task", leave=False)
    around(Gateway, "run", "run")
    around(Gateway, "_route", "route", enter=False)
    around(Gateway, "_validate", "validate", enter=False)
    around(Gateway, "_decide", "decide")
    around(CallRecord, "decided", "decision row")
    around(CallRecord, "finished", "answer row")
    around(SQLiteDatabase, "write_inline", "commit")
    around(SQLiteDatabase, "_commit_group", "group")
    around(lean_stdio._SharedStdin, "send_line", "upstream write")
    around(WireOut, "write", "answer write")
    response_for = lean_stdio.response_for

    def traced_response(*a: Any, **k: Any) -> Any:
        stamp("call resumed")
        return response_for(*a, **k)

    lean_stdio.response_for = traced_response
    if os.environ.get("FINE_ROW") == "1":
        _fine_row_stamps(around, stamp)
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


def _fine_row_stamps(around: Any, stamp: Any) -> None:
    """``FINE_ROW=1``: the audit row's pieces stamped too (perf-rows9): the entry, the row's columns, its
    canonical text, the chain's hash, the store's file checks, the statement (SQLite's part), the size noted
    after it. Each stamp pair costs ~1 us of the loop's CPU: read the pieces, not the stage's total."""
    from sentinel_mcp.gateway import audit
    from sentinel_mcp.gateway.audit import AuditLog
    from sentinel_mcp.gateway.call_record import CallRecord
    from sentinel_mcp.storage.sqlite import SQLiteDatabase

    around(CallRecord, "_entry", "entry")
    around(AuditLog, "row", "columns")
    around(AuditLog, "_chained", "chain hash")
    around(SQLiteDatabase, "_ensure_connection", "file checks")
    around(SQLiteDatabase, "_note_size", "size noted")
    canonical = audit.canonical

    def traced_canonical(values: Any) -> str:
        stamp("canonical >")
        try:
            return canonical(values)
        finally:
            stamp("canonical <")

    audit.canonical = traced_canonical  # type: ignore[assignment]
    run = SQLiteDatabase._exec

    def traced_exec(conn: Any, st: Any) -> Any:
        stamp("statement >")
        try:
            return run(conn, st)
        finally:
            stamp("statement <")

    SQLiteDatabase._exec = staticmethod(traced_exec)  # type: ignore[method-assign]


def threads(pid: int) -> dict[str, tuple[int, int, int, int]]:
    """Per thread (``tid name``): voluntary and involuntary context switches, ns on a CPU and ns waiting
    for one (``schedstat``: runnable, not running)."""
    out: dict[str, tuple[int, int, int, int, int]] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:  # the process ended
        return out
    for tid in tids:
        try:
            status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
            sched = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
            stime = int(Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()[12])
        except OSError:
            continue
        name = status.split("Name:", 1)[1].split("\n", 1)[0].strip()
        vol = int(status.split("\nvoluntary_ctxt_switches:")[1].split()[0])
        invol = int(status.split("\nnonvoluntary_ctxt_switches:")[1].split()[0])
        out[f"{tid} {name}"] = (vol, invol, int(sched[0]), int(sched[1]), stime)
    return out


def toolbox_under(pid: int) -> list[int]:
    """The test toolbox's process among ``pid``'s descendants (it runs under the gateway's reaper)."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError):
                continue
    found = []
    for child in parent:
        up, hops = child, 0
        while up in parent and up != pid and hops < 5:
            up, hops = parent[up], hops + 1
        if up == pid and child != pid:
            try:
                if b"toolbox_server" in Path(f"/proc/{child}/cmdline").read_bytes():
                    found.append(child)
            except OSError:
                continue
    return found


class Client:
    def __init__(self, proc: subprocess.Popen[bytes], era: str) -> None:
        self.proc = proc
        assert proc.stdin is not None and proc.stdout is not None
        self.wfd, self.rfd = proc.stdin.fileno(), proc.stdout.fileno()
        self.buf = b""
        meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientInfo": {"name": "trace", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}}
        self.params: dict[str, Any] = {} if era == "legacy" else {"_meta": meta}
        if era == "legacy":
            self.ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "trace", "version": "1"}}})
            os.write(self.wfd, b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        tools = self.ask({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": self.params})
        self.tool = next(t["name"] for t in tools["result"]["tools"] if t["name"].endswith("noop"))
        self.n = 100

    def line(self) -> bytes:
        while b"\n" not in self.buf:
            chunk = os.read(self.rfd, 65536)
            if not chunk:
                raise SystemExit("the gateway ended")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        os.write(self.wfd, (json.dumps(message) + "\n").encode())
        while True:
            answer = json.loads(self.line())
            if answer.get("id") == message["id"]:
                return answer  # type: ignore[no-any-return]

    def call(self) -> tuple[int, int]:
        self.n += 1
        data = (json.dumps({"jsonrpc": "2.0", "id": self.n, "method": "tools/call",
                            "params": {"name": self.tool, "arguments": {}, **self.params}}) + "\n").encode()
        t0 = time.perf_counter_ns()
        os.write(self.wfd, data)
        line = self.line()
        t1 = time.perf_counter_ns()
        if b'"result"' not in line or b'"isError":true' in line:
            raise SystemExit(f"the call failed: {line[:300]!r}")
        return t0, t1


def per_call(stamps: list[list[Any]], calls: list[tuple[int, int]]) -> list[list[tuple[str, int, int]]]:
    """The stamps of each call, between its client write and its client read."""
    out, i = [], 0
    for t0, t1 in calls:
        while i < len(stamps) and stamps[i][1] < t0:
            i += 1
        mine = [("client write", t0, -1)]
        while i < len(stamps) and stamps[i][1] <= t1:
            mine.append(tuple(stamps[i]))  # type: ignore[arg-type]
            i += 1
        mine.append(("client read", t1, -1))
        out.append(mine)
    return out


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--serve":
        return serve(sys.argv[2], sys.argv[3:])
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--era", choices=("modern", "legacy"), default="modern")
    ap.add_argument("--tree", default=str(ROOT), help="the source tree the gateway runs")
    args = ap.parse_args()
    tree = Path(args.tree).resolve()
    data = Path(tempfile.mkdtemp(prefix="stdio-trace-"))
    cfg = data / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [str(TOOLBOX)]}},
                               "sentinel": {"data_dir": str(data / "state"), "builtins": []}}))
    cfg.chmod(0o600)
    out = data / "stamps.json"
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(out), "-c", str(cfg), "serve"], cwd=tree,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(tree)})
    load0 = os.getloadavg()[0]
    direct_proc = None
    try:
        client = Client(proc, args.era)
        for _ in range(WARM):
            client.call()
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
        others = {f"upstream {p}": p for p in toolbox_under(proc.pid)}
        direct_proc = subprocess.Popen([sys.executable, str(TOOLBOX)], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                       env={**os.environ, "PYTHONWARNINGS": "ignore"})
        direct = Client(direct_proc, args.era)
        for _ in range(WARM):
            direct.call()
        others["direct toolbox"] = direct_proc.pid
        plain: list[tuple[int, int]] = []
        alone: list[tuple[int, int]] = []
        before = {"gateway": threads(proc.pid), **{k: threads(p) for k, p in others.items()}}
        while len(plain) < args.calls:  # blocks alternated: the machine's load moves
            plain += [client.call() for _ in range(25)]
            alone += [direct.call() for _ in range(25)]
        after = {"gateway": threads(proc.pid), **{k: threads(p) for k, p in others.items()}}
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(30)
        if direct_proc is not None:
            assert direct_proc.stdin is not None
            direct_proc.stdin.close()
            direct_proc.wait(30)
    traced = per_call(stamps, calls)
    print(f"\nOne sequential stdio no-op call ({args.era}), {args.calls} calls after {WARM}; data in {data}; "
          f"load average {load0:.1f} -> {os.getloadavg()[0]:.1f}")
    def p(xs: list[tuple[int, int]], q: float) -> float:
        return sorted((b - a) / 1e6 for a, b in xs)[int(len(xs) * q)]

    print(f"client round trip p50 / p90, ms: through Sentinel {p(plain, .5):.3f} / {p(plain, .9):.3f} "
          f"(stamped {p(calls, .5):.3f}), direct {p(alone, .5):.3f} / {p(alone, .9):.3f} (blocks of 25 "
          "alternated): "
          f"added {p(plain, .5) - p(alone, .5):+.3f} / {p(plain, .9) - p(alone, .9):+.3f}")
    # the most common sequence of stamps: its steps' medians
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
            if start not in labels or end not in labels:
                continue
            i, j = labels.index(start), labels.index(end, labels.index(start))
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
        n = args.calls if label != "direct toolbox" else len(alone)
        for t, (v, iv, run, wait, kern) in sorted(was.items()):
            if t in after[label]:
                v2, iv2, run2, wait2, kern2 = after[label][t]
                if v2 - v or run2 - run:
                    print(f"  {label:15} {t:28} {(v2 - v) / n:6.2f} {(iv2 - iv) / n:6.2f} "
                          f"{(run2 - run) / 1e3 / n:8.1f} {(wait2 - wait) / 1e3 / n:8.1f} "
                          f"{(kern2 - kern) * 1e6 / TICK / n:8.0f}")

if __name__ == "__main__":
    main()
