"""Where the time of one cold start of ``serve`` (stdio, embedded default) goes, stage by stage (issue 21).

Starts ``sentinel-mcp -v serve`` ``--runs`` times and stamps each ``start-up stage:`` debug line (and the
upstream's ``ready`` line) with the seconds since spawn as this process reads it from stderr, then the first
``tools/list`` answer. Stderr is read in a thread, so a stage's stamp is when its line arrived (a few ms after
it was logged).
Usage: ``python benchmarks/cold_start_stages.py [--runs 3] [--config FILE]``. No goal, no test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from cold_start import answered_tools_list, ended  # noqa: E402 - the same handshake as the cold-start row
MARKS = ("start-up stage: ", "upstream airline ready")


def one_start(env: dict[str, str], config: str | None = None) -> list[tuple[float, str]]:
    stamps: list[tuple[float, str]] = []
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "sentinel_mcp", "-v", *(["--config", config] if config else []), "serve"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
                            start_new_session=True, cwd=ROOT)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    err = proc.stderr

    def read_stderr() -> None:
        for line in err:
            for mark in MARKS:
                if mark in line:
                    text = line.split(mark, 1)[1].strip() if mark.endswith(": ") else mark
                    stamps.append((time.perf_counter() - t0, text))

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        answered_tools_list(proc)
        stamps.append((time.perf_counter() - t0, "tools/list answered"))
    finally:
        ended(proc)
        reader.join(2)
    return sorted(stamps)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--config", help="a config instead of the embedded default")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "SENTINEL_DATA_DIR": str(Path(tmp) / "d"),
               "PYTHONPYCACHEPREFIX": str(Path(tmp) / "pyc")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.pop("SENTINEL_CONFIG", None)
        one_start(env, args.config)  # the data dir and the bytecode cache
        for run in range(args.runs):
            stamps = one_start(env, args.config)
            print(f"run {run + 1} (load average {os.getloadavg()[0]:.1f}):")
            for at, what in stamps:
                print(f"  {at:6.3f} s  {what}")


if __name__ == "__main__":
    main()
