"""The core's .qlf A/B (issue 21): a rulebase rehearsal child (every gateway start and check) and the engine's
core load, from the .qlf (policy/core_qlf.py) against from source, alternated run by run on two copies of the
package's Prolog directory (one built, one without its .qlf and manifest). Per run: the child's CPU (its
rusage) and wall; once a side, Prolog inferences (the child's at exit; the engine's load in a fresh Python),
which do not move with the machine's load.

    python benchmarks/harness/core_qlf_ab.py [--runs 10] [--rulebase rulebases/airline.pl]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from sentinel_mcp.policy.core_qlf import MANIFEST, PROLOG_DIR, build, core_arguments  # noqa: E402
from sentinel_mcp.policy.load_limit import LOAD_INFERENCE_LIMIT  # noqa: E402
from sentinel_mcp.policy.rulebase_includes import loader_files  # noqa: E402

AT_HALT = "at_halt((statistics(inferences, I), format(user_error, 'inferences ~d~n', [I])))"
ENGINE = """
import sys, time
from pathlib import Path
from sentinel_mcp.policy import engine_thread
engine_thread.CORE = Path(sys.argv[1]) / "sentinel_core.pl"
from pyswip import Prolog
p = Prolog()
i0 = next(p.query("statistics(inferences, I)"))["I"]
t0 = time.process_time()
list(p.query(engine_thread._load_core_goal()))
t1 = time.process_time()
i1 = next(p.query("statistics(inferences, I)"))["I"]
how = next(p.query("core_files:core_loaded(H)"))["H"]
print(how, i1 - i0, t1 - t0)
"""


def rehearsal(directory: Path, rulebase: str) -> tuple[float, float, int]:
    """One child as load_rehearsal._spawn starts it: (CPU seconds, wall seconds, inferences at its exit)."""
    files = json.dumps(loader_files([rulebase]))
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        ["swipl", "-f", "none", "-q", "--no-tty", "-g", AT_HALT, str(directory / "load_rehearsal.pl"), "--",
         *core_arguments(directory), str(2 << 20), str(LOAD_INFERENCE_LIMIT), files],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None and proc.stdin is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    assert status == 0 and json.loads(out)["core"], err
    inferences = int(err.decode().split("inferences ")[-1].split()[0])
    return usage.ru_utime + usage.ru_stime, wall, inferences


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rulebase", default=str(ROOT / "rulebases" / "airline.pl"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sides = {"qlf": Path(tmp) / "qlf" / "prolog", "source": Path(tmp) / "source" / "prolog"}
        for side, directory in sides.items():
            shutil.copytree(PROLOG_DIR, directory, ignore=shutil.ignore_patterns("*.qlf", MANIFEST))
            if side == "qlf":
                build(directory)
        got: dict[str, list[tuple[float, float, int]]] = {side: [] for side in sides}
        for _ in range(args.runs):
            for side, directory in sides.items():
                got[side].append(rehearsal(directory, args.rulebase))
        for side, directory in sides.items():
            cpu, wall, inf = zip(*got[side])
            engine = subprocess.run([sys.executable, "-c", ENGINE, str(directory)], capture_output=True,
                                    text=True, check=True, cwd=ROOT).stdout.split()
            print(f"{side}: rehearsal child CPU median {statistics.median(cpu):.3f} s (min {min(cpu):.3f}), "
                  f"wall median {statistics.median(wall):.3f} s, inferences {sorted(set(inf))}; "
                  f"engine core load ({engine[0]}) {int(engine[1]):,} inferences, "
                  f"{float(engine[2]):.3f} s CPU")


if __name__ == "__main__":
    main()
