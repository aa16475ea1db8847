"""Cold start A/B (issue 21): `serve` of the embedded default to its first tools/list, this tree against
another (``--base``), starts alternated one by one (base, this, base, this, ...) so the machine's load falls
on both alike. Rows: stdio (``cold_start.py``'s raw JSON-RPC handshake) and HTTP (``serve --http``, polled
as ``hot_path.py``'s cold-start row does). Each start: wall seconds to the answer, the process tree's CPU
seconds by then, and, once per tree, the modules the gateway had imported (``-X importtime`` lines); with
``--count``, one more start a tree counts the gateway's Python calls to its exit (``start_counts/``).
Each tree has its own data dir and bytecode cache (written by a first, uncounted start), as an install has.

    python benchmarks/harness/cold_start_ab.py --base /path/to/main [--runs 15] [--skip http] [--count]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "benchmarks" / "harness"), str(ROOT)]
from cold_start import answered_tools_list, ended, tree_cpu  # noqa: E402
from load import TOKEN, call_headers, post  # noqa: E402
from tests.conftest import free_port, stop_process  # noqa: E402

PY = sys.executable
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {}}}}


def stdio_start(env: dict[str, str], tree: Path,
                err: int | None = subprocess.DEVNULL) -> tuple[float, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen([PY, "-m", "sentinel_mcp", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=err, env=env, text=True, start_new_session=True,
                            cwd=tree)
    try:
        answered_tools_list(proc)
        return time.perf_counter() - t0, tree_cpu(proc.pid)
    finally:
        ended(proc)


def http_start(env: dict[str, str], tree: Path,
               err: int | None = subprocess.DEVNULL) -> tuple[float, float]:
    port = free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen([PY, "-m", "sentinel_mcp", "serve", "--http", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=err, env=env, start_new_session=True, cwd=tree)
    token_file = Path(env["SENTINEL_DATA_DIR"]) / "http-token"
    try:
        while time.perf_counter() - t0 < 90 and proc.poll() is None:
            token = token_file.read_text().strip() if token_file.exists() else TOKEN
            try:
                headers = {**call_headers("", token=token), "Mcp-Method": "tools/list"}
                status, _, text = post(f"http://127.0.0.1:{port}/mcp", LIST, headers, timeout=5)
                if status == 200 and '"tools"' in text:
                    return time.perf_counter() - t0, tree_cpu(proc.pid)
            except OSError:
                pass
            time.sleep(0.01)
        raise RuntimeError(f"serve --http of {tree} gave no tools/list")
    finally:
        stop_process(proc)


def modules_imported(start, env: dict[str, str], tree: Path, tmp: Path) -> int:
    """The modules the gateway imported by its first answer (its ``-X importtime`` lines)."""
    log = tmp / "importtime.txt"
    with log.open("w") as f:
        start({**env, "PYTHONPROFILEIMPORTTIME": "1"}, tree, err=f.fileno())
    return sum(1 for line in log.read_text().splitlines() if line.startswith("import time:") and "|" in line
               and "self [us]" not in line)


def calls_counted(start, env: dict[str, str], tree: Path, tmp: Path) -> str:
    """Python calls and modules of one start to its exit after the first answer (``start_counts/``)."""
    out = tmp / "counts"
    out.mkdir(exist_ok=True)
    (out / "gateway.calls").unlink(missing_ok=True)
    start({**env, "PYTHONPATH": f"{tree}:{Path(__file__).parent / 'start_counts'}",
           "START_COUNTS_DIR": str(out)}, tree)
    for _ in range(100):  # written at the gateway's exit, which the start's stop awaited
        if (out / "gateway.calls").exists():
            calls, modules = (out / "gateway.calls").read_text().split()
            return f"{int(calls):,} calls, {int(modules):,} modules at exit"
        time.sleep(0.1)
    return "not counted (the gateway did not exit cleanly)"


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--skip", default="", help="rows to leave out: stdio,http")
    ap.add_argument("--count", action="store_true", help="one more start a tree, counted")
    args = ap.parse_args()
    skip = set(args.skip.split(",")) - {""}
    trees = {"base": args.base.resolve(), "this": ROOT}
    rows = [(name, fn) for name, fn in (("stdio", stdio_start), ("http", http_start)) if name not in skip]
    with tempfile.TemporaryDirectory() as tmp:
        envs = {}
        for label, tree in trees.items():
            env = {**os.environ, "PYTHONPATH": str(tree),
                   "PYTHONPYCACHEPREFIX": str(Path(tmp) / f"pyc-{label}")}
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env.pop("SENTINEL_CONFIG", None)
            for row, _ in rows:
                envs[label, row] = {**env, "SENTINEL_DATA_DIR": str(Path(tmp) / f"data-{label}-{row}")}
        results: dict[tuple[str, str], list[tuple[float, float]]] = {k: [] for k in envs}
        modules: dict[tuple[str, str], int] = {}
        counted: dict[tuple[str, str], str] = {}
        for row, fn in rows:
            for label, tree in trees.items():  # the data dir, the bytecode cache, the owner's token
                fn(envs[label, row], tree)
                modules[label, row] = modules_imported(fn, envs[label, row], tree, Path(tmp))
                if args.count:
                    counted[label, row] = calls_counted(fn, envs[label, row], tree, Path(tmp))
        load0 = os.getloadavg()[0]
        for _ in range(args.runs):
            for row, fn in rows:
                for label, tree in trees.items():
                    results[label, row].append(fn(envs[label, row], tree))
        print(f"cold start A/B, {args.runs} alternated starts each, load average {load0:.1f} -> "
              f"{os.getloadavg()[0]:.1f}; base {trees['base']}")
        print("| row | tree | wall median | wall p90 | wall min | tree CPU median | modules imported |")
        print("|---|---|---|---|---|---|---|")
        for row, _ in rows:
            for label in trees:
                walls = [w for w, _ in results[label, row]]
                cpus = [c for _, c in results[label, row]]
                print(f"| {row} | {label} | {statistics.median(walls):.2f} s | {p90(walls):.2f} s | "
                      f"{min(walls):.2f} s | {statistics.median(cpus):.2f} s | {modules[label, row]} |")
        for (label, row), text in counted.items():
            print(f"counted, {row} {label}: {text}")


if __name__ == "__main__":
    main()
