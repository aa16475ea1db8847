"""Cold start of ``sentinel-mcp serve`` (stdio, the embedded default) to its first ``tools/list`` answer, and
what it is made of. Each phase runs in its own fresh interpreter; min and median of ``--runs`` starts:

- interpreter + the gateway's imports (cli, serve, runtime);
- the airline upstream alone (``python -m examples.airline``) to its tools/list: its own interpreter and imports;
- the gateway without the airline upstream (imports, Prolog start, fact store, rulebase load, built-ins);
- the whole embedded default (the airline upstream included, spawned by the gateway).

If the whole is close to max(parts) rather than their sum, the upstream's start overlaps the gateway's.
Usage: ``python benchmarks/cold_start.py [--runs 3]``. Goal beside each row; nothing here is a test.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
HELLO = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}


def to_first_tools_list(cmd: list[str], env: dict[str, str]) -> float:
    """Seconds from spawn to the first tools/list answer, over raw JSON-RPC lines on stdio."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env, text=True, start_new_session=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(HELLO) + "\n")
        proc.stdin.flush()
        json.loads(proc.stdout.readline())
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}) + "\n")
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{cmd} ended before answering tools/list")
            msg = json.loads(line)
            if msg.get("id") == 1:
                if "tools" not in msg.get("result", {}):
                    raise RuntimeError(f"tools/list failed: {msg}")
                return time.perf_counter() - t0
    finally:
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()


def imports_only() -> float:
    t0 = time.perf_counter()
    subprocess.run([PY, "-c", "import sentinel_mcp.cli, sentinel_mcp.app.serve, sentinel_mcp.app.runtime"],
                   env=ENV, check=True)
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
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        env = {**ENV, "SENTINEL_DATA_DIR": str(Path(tmp) / "data")}
        cfg = Path(tmp) / "no-airline.json"
        without_airline_config(cfg)
        serve = [PY, "-m", "sentinel_mcp", "serve"]
        phases = [
            ("interpreter + gateway imports", imports_only, ""),
            ("airline upstream alone, to its tools/list",
             lambda: to_first_tools_list([PY, "-m", "examples.airline"], ENV), ""),
            ("gateway without upstreams (imports, Prolog, rulebases, built-ins)",
             lambda: to_first_tools_list([PY, "-m", "sentinel_mcp", "--config", str(cfg), "serve"], env), ""),
            ("serve, embedded default (stdio), to first tools/list",
             lambda: to_first_tools_list(serve, env), "<= 1.5 s"),
        ]
        to_first_tools_list(serve, env)  # the first start on a data dir makes its files; measure later ones
        times: dict[str, list[float]] = {name: [] for name, _, _ in phases}
        for _ in range(args.runs):  # interleaved, so load changes hit every row alike
            for name, fn, _ in phases:
                times[name].append(fn())
    print(f"cold start, {args.runs} runs each, interleaved (load average {os.getloadavg()[0]:.1f})")
    print(f"| {'phase':<70} | {'min':>7} | {'median':>7} | goal |")
    print(f"|{'-' * 72}|{'-' * 9}|{'-' * 9}|------|")
    for name, _, goal in phases:
        print(f"| {name:<70} | {min(times[name]):6.2f}s | {statistics.median(times[name]):6.2f}s | {goal} |")


if __name__ == "__main__":
    main()
