"""CPU of every process below a command (a pytest run), by kind: reads ``/proc`` every 30 ms.

``python benchmarks/harness/descendant_cpu.py OUT.json -- python -m pytest ...`` runs the command, keeps each
descendant's last ``utime+stime`` and command line (whatever started it: ``Popen``, anyio/asyncio,
``posix_spawn``, a gateway child's child, a fork server's child that ``RUSAGE_CHILDREN`` never sees),
writes them to OUT.json and prints a table by kind; ``descendant_cpu.py --table OUT.json`` prints it again.
A process shorter than a sample is missed (a few ms of CPU each); the sum is checked against the run's
``RUSAGE_CHILDREN`` in the first line (benchmarks/README.md, "Test upstreams forked from a warm interpreter").
"""

from __future__ import annotations

import collections
import json
import os
import resource
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def _stats() -> tuple[dict[int, int], dict[int, tuple[int, str]]]:
    parents, info = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        info[int(entry)] = (int(fields[11]) + int(fields[12]), fields[19])  # utime+stime, start time
    return parents, info


def _scan(root: int, seen: dict[str, list]) -> None:
    parents, info = _stats()
    kids: dict[int, list[int]] = {}
    for child, parent in parents.items():
        kids.setdefault(parent, []).append(child)
    stack = [root]
    while stack:
        for pid in kids.get(stack.pop(), ()):
            stack.append(pid)
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:  # again each time: an exec changes it
                    argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
            except OSError:
                continue
            row = seen.setdefault(f"{pid}:{info[pid][1]}", [argv, 0.0])
            row[0] = argv or row[0]
            row[1] = max(row[1], info[pid][0] / TICK)


def kind(argv: list[str]) -> str:
    line = " ".join(argv)
    if not argv:
        return "unknown"
    if "exec(eval(sys.stdin.readline()))" in line:
        return "pytest worker"
    for name in ("upstream_reaper.py", "fork_launcher.py", "fork_server.py"):
        if name in line:
            return name + (" (server, keepers, forked upstreams)" if name == "fork_server.py" else "")
    exe = os.path.basename(argv[0])
    if not exe.startswith("python"):
        return exe.split()[0][:30]
    if "-m" in argv[1:3]:
        module = argv[argv.index("-m") + 1]
        if module == "sentinel_mcp":
            return "python -m sentinel_mcp " + ("serve" if "serve" in argv else "CLI")
        return f"python -m {module.split('.')[0]}.*" if module.split(".")[0] in ("examples", "tests") \
            else f"python -m {module}"
    if len(argv) > 1 and "/tests/" in argv[1]:
        return "test upstream script"
    return "python other"


def table(data: dict) -> None:
    kinds: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
    for row in data["procs"].values():  # [argv, cpu] (a first version also kept the parent's pid)
        kinds[kind(row[0])][0] += 1
        kinds[kind(row[0])][1] += row[1]
    total = sum(c for _, c in kinds.values())
    reaped = data.get("rusage_children", data.get("total_children_cpu", 0.0))
    print(f"RUSAGE_CHILDREN {reaped:.1f} s; sampled {total:.1f} s")
    for name, (n, cpu) in sorted(kinds.items(), key=lambda kv: -kv[1][1]):
        print(f"{name:56s} {int(n):6d} {cpu:9.1f} s {cpu / n:6.2f} s each")


def main(argv: list[str]) -> None:
    if argv[1] == "--table":
        with open(argv[2]) as f:
            table(json.load(f))
        return
    out, command = argv[1], argv[argv.index("--") + 1:]
    proc = subprocess.Popen(command)
    seen: dict[str, list] = {}
    while proc.poll() is None:
        _scan(proc.pid, seen)
        time.sleep(0.03)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    data = {"rusage_children": usage.ru_utime + usage.ru_stime, "procs": seen}
    with open(out, "w") as f:
        json.dump(data, f)
    table(data)


if __name__ == "__main__":
    main(sys.argv)
