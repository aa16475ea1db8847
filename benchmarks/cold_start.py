"""Cold start of ``sentinel-mcp serve`` (stdio, the embedded default) to its first ``tools/list`` answer, and
what it is made of. Each phase runs in its own fresh interpreter; min and median of ``--runs`` starts:

- interpreter + the gateway's imports (cli, serve, runtime);
- the airline upstream alone (``python -m examples.airline``) to its tools/list: its interpreter and imports;
- the gateway without the airline upstream (imports, Prolog start, fact store, rulebase load, built-ins);
- the whole embedded default (the airline upstream included, spawned by the gateway).

If the whole is close to max(parts) rather than their sum, the upstream's start overlaps the gateway's.
Beside the wall time, the CPU time of the whole process tree (gateway, reaper, upstream) when the answer
arrives. ``--against TREE`` adds the same rows for another checkout (say, main), interleaved in the same run.
Python's bytecode is cached in a temporary directory (the first start writes it), as in an installed wheel.
Usage: ``python benchmarks/cold_start.py [--runs 3] [--against /work/main]``. Goal beside each row; no test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
HELLO = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}


def tree_cpu(root: int) -> float:
    """CPU seconds (user + system) of ``root`` and its live descendants, from /proc (0 elsewhere)."""
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc/self/stat").exists() else []:
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
    tree, total = {root}, 0.0
    for _ in range(8):  # gateway -> reaper -> upstream (-> its children): a few generations
        tree |= {pid for pid, (ppid, _) in stats.items() if ppid in tree}
    for pid in tree:
        total += stats.get(pid, (0, 0.0))[1]
    return total


CPU: dict[str, list[float]] = {}


def answered_tools_list(proc: subprocess.Popen[str]) -> dict[str, Any]:
    """The handshake, then the first tools/list, over raw JSON-RPC lines on ``proc``'s stdio: its answer."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(HELLO) + "\n")
    proc.stdin.flush()
    json.loads(proc.stdout.readline())
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}) + "\n")
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{proc.args} ended before answering tools/list")
        msg: dict[str, Any] = json.loads(line)
        if msg.get("id") == 1:
            if "tools" not in msg.get("result", {}):
                raise RuntimeError(f"tools/list failed: {msg}")
            return msg


def ended(proc: subprocess.Popen[str]) -> None:
    """Its stdin closed (a stdio server's end), waited for; its process group killed after 10 s."""
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()


def to_first_tools_list(cmd: list[str], env: dict[str, str], cwd: Path = ROOT,
                        cpu_row: str | None = None) -> float:
    """Seconds from spawn to the first tools/list answer, over raw JSON-RPC lines on stdio."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env, text=True, start_new_session=True, cwd=cwd)
    try:
        answered_tools_list(proc)
        elapsed = time.perf_counter() - t0
        if cpu_row is not None:
            CPU.setdefault(cpu_row, []).append(tree_cpu(proc.pid))
        return elapsed
    finally:
        ended(proc)


def imports_only(env: dict[str, str], cwd: Path = ROOT) -> float:
    t0 = time.perf_counter()
    subprocess.run([PY, "-c", "import sentinel_mcp.cli, sentinel_mcp.app.serve, sentinel_mcp.app.runtime"],
                   env=env, check=True, cwd=cwd)
    return time.perf_counter() - t0


def without_airline_config(path: Path) -> None:
    from sentinel_mcp.config import RULEBASES_DIR

    data = {"mcpServers": {}, "sentinel": {
        "rulebases": [str(RULEBASES_DIR / n) for n in ("default.pl", "airline.pl", "device.pl", "sensors.pl",
                                                        "swarm.pl") if (RULEBASES_DIR / n).exists()],
        "seeds": {"current_user": "mia_li_3668", "today": "2024-05-15"},
        "builtins": ["sentinel", "device", "sensors", "llm", "swarm", "a2a", "agent"],
        "device": {"backend": "simulated", "risk_classifier": "rules"}, "sensors": {"source": "simulated"}}}
    path.write_text(json.dumps(data))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--against", type=Path, help="another checkout (its own package, same interpreter)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    trees = [("", ROOT)] + ([(f" [{args.against.name}]", args.against.resolve())] if args.against else [])
    with tempfile.TemporaryDirectory() as tmp:
        phases = []
        for label, tree in trees:
            # each tree its own data dir and bytecode cache; the tree first on sys.path (cwd for -m and -c)
            env = {**os.environ, "PYTHONPATH": str(tree), "SENTINEL_DATA_DIR": str(Path(tmp) / f"d{label}"),
                   "PYTHONPYCACHEPREFIX": str(Path(tmp) / f"pyc{label}")}
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            cfg = Path(tmp) / f"no-airline{label}.json"
            without_airline_config(cfg)
            serve = [PY, "-m", "sentinel_mcp", "serve"]
            phases += [
                (f"interpreter + gateway imports{label}", partial(imports_only, env, tree), ""),
                (f"airline upstream alone, to its tools/list{label}",
                 partial(to_first_tools_list, [PY, "-m", "examples.airline"], env, tree,
                         f"airline upstream alone{label}"), ""),
                (f"gateway without upstreams (imports, Prolog, rulebases, built-ins){label}",
                 partial(to_first_tools_list, [PY, "-m", "sentinel_mcp", "--config", str(cfg), "serve"], env,
                         tree, f"gateway without upstreams{label}"), ""),
                (f"serve, embedded default (stdio), to first tools/list{label}",
                 partial(to_first_tools_list, serve, env, tree, f"serve, embedded default{label}"),
                 "<= 1.5 s"),
            ]
            to_first_tools_list(serve, env, tree)  # the first start makes the data dir and the bytecode cache
            to_first_tools_list([PY, "-m", "examples.airline"], env, tree)
        times: dict[str, list[float]] = {name: [] for name, _, _ in phases}
        for _ in range(args.runs):  # interleaved, so load changes hit every row alike
            for name, fn, _ in phases:
                times[name].append(fn())
    print(f"cold start, {args.runs} runs each, interleaved (load average {os.getloadavg()[0]:.1f})")
    print(f"| {'phase':<78} | {'min':>7} | {'median':>7} | goal |")
    print(f"|{'-' * 80}|{'-' * 9}|{'-' * 9}|------|")
    for name, _, goal in phases:
        print(f"| {name:<78} | {min(times[name]):6.2f}s | {statistics.median(times[name]):6.2f}s | {goal} |")
    print("\nCPU of the process tree (gateway, reaper, upstream) when the answer arrived, median:")
    for name, values in CPU.items():
        print(f"| {name:<78} | {statistics.median(values):6.2f}s |")


if __name__ == "__main__":
    main()
