"""Where the capacity row's CPU goes, by thread and by kind of code (issue 21): the gateway of
``pipeline_capacity.py``'s capacity row (16 wrk connections, 2026-07-28 ``tools/call`` to the in-process no-op
built-in, durable audit) under ``--seconds`` of load after a warm-up.

- Each gateway thread's user and system CPU per call (``/proc/<pid>/task/<tid>/stat`` before and after): how
  much is the event loop's, how much the audit writer's, and how much of either is system calls.
- ``--perf``: the event loop's thread sampled by ``perf record -e cpu-clock`` (on-CPU samples only: a thread
  preempted or waiting is not sampled, unlike py-spy, whose samples land on the system calls that wake
  another thread), its samples by shared object and the top symbols. ``libpython`` (the interpreter running
  bytecode) against pydantic-core, ``_json``, OpenSSL and the kernel says whether a cut must remove Python
  work or can swap a C library.

CPU a call is a count of the machine's work, not a rate: it moves less than a rate on a busy machine, but
still moves (caches, preemption): compare two trees in one run, alternated, with ``capacity_ab.py``.
Usage: python benchmarks/harness/capacity_cpu_split.py [--seconds 8] [--perf] [--top 25]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(HERE), str(ROOT / "benchmarks")]
import pipeline_capacity as pc  # noqa: E402
from load import CLK, call_body, call_headers, check_call, wrk  # noqa: E402
from tests.conftest import stop_process  # noqa: E402


def thread_times(pid: int) -> dict[tuple[str, str], tuple[int, int]]:
    """(tid, name) -> (user, system) clock ticks of each thread of ``pid``."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
            name = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
        except OSError:
            continue  # ended meanwhile
        fields = stat.rsplit(")", 1)[1].split()
        out[(tid, name)] = (int(fields[11]), int(fields[12]))
    return out


def perf_report(data: Path, top: int) -> str:
    def report(sort: str) -> list[str]:
        text = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--sort", sort, "--stdio"],
                              capture_output=True, text=True).stdout
        return [line for line in text.splitlines() if line.strip() and not line.startswith("#")][:top]

    return "\n".join(["by shared object:", *report("dso"), "", "by symbol:", *report("sym")])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--perf", action="store_true")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-cpu-split-"))
    proc, url = pc.sentinel(tmp, {}, ["bench"], "capacity")
    try:
        check_call(url, "bench__noop")
        body, headers = call_body("bench__noop"), call_headers("bench__noop")
        wrk(url, body, headers, connections=16, seconds=2)  # warm-up
        tracer = None
        if args.perf:  # the main thread's id is the process id: the event loop's thread
            tracer = subprocess.Popen(
                ["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "-t", str(proc.pid),
                 "-o", str(tmp / "perf.data"), "--", "sleep", str(args.seconds)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        before = thread_times(proc.pid)
        r = wrk(url, body, headers, connections=16, seconds=args.seconds, server_pid=proc.pid)
        after = thread_times(proc.pid)
        if tracer is not None:
            tracer.wait(timeout=60)
    finally:
        stop_process(proc)
    calls = max(r.requests, 1)
    print(f"{pc.fmt(r)}\n\nCPU a call by gateway thread (ms; user / system):")
    for key, (user, system) in sorted(after.items(), key=lambda kv: -sum(kv[1])):
        u0, s0 = before.get(key, (0, 0))
        if user - u0 or system - s0:
            tid, name = key
            label = "event loop" if tid == str(proc.pid) else f"{name} {tid}"  # (the OS name: "python")
            user_ms, system_ms = (user - u0) / CLK / calls * 1e3, (system - s0) / CLK / calls * 1e3
            print(f"  {label:16} {user_ms:6.3f} / {system_ms:6.3f}")
    if args.perf:
        print("\nthe event loop's on-CPU samples (perf cpu-clock):")
        print(perf_report(tmp / "perf.data", args.top))


if __name__ == "__main__":
    main()
