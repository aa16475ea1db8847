"""The audit rows' pieces on the call path, two trees side by side (perf-rows9): ``stdio_call_trace.py`` with
``FINE_ROW=1`` (the row's pieces stamped) run for the base tree and this one in turn, ``--rounds`` times each,
on tmpfs (``TMPDIR``, default ``/dev/shm``) unless told; per piece, the median over the rounds of each
round's median of the loop thread's CPU (us), decision row and answer row apart, with the load.
Usage: python benchmarks/harness/row_pieces_ab.py --base /work/main [--rounds 3] [--calls 1000]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]
TRACE = HERE.parent / "stdio_call_trace.py"
LINE = re.compile(r"^\s*(.+?) -> (.+?)\s+(-?[\d.]+|nan)\s+(-?[\d.]+|nan)\s+(-?[\d.]+|nan)$")


def one(tree: str, calls: int) -> dict[str, float]:
    """{piece: loop CPU us} of one run: the consecutive stamps of the most common path, the decision row's
    pieces and the answer row's told apart by the row they are in."""
    env = {**os.environ, "FINE_ROW": "1", "TMPDIR": os.environ.get("TMPDIR", "/dev/shm")}
    out = subprocess.run([sys.executable, str(TRACE), "--calls", str(calls), "--tree", tree], env=env,
                         capture_output=True, text=True, check=True).stdout
    pieces: dict[str, float] = {}
    row = ""
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            if line.startswith("the same calls by stage"):
                break
            continue
        a, b, cpu = m.group(1).strip(), m.group(2).strip(), m.group(4)
        if a.startswith("decision row >") or a.startswith("answer row >"):
            row = a.split(" row")[0]
        key = f"{row}: {a} -> {b}" if row else f"{a} -> {b}"
        if a.startswith(("decision row <", "answer row <")):
            row = ""
        if cpu != "nan":
            pieces[key] = float(cpu)
    return pieces


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=1000)
    args = ap.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"base": [], "this": []}
    loads = [os.getloadavg()[0]]
    for r in range(args.rounds):
        order = [("base", args.base), ("this", str(ROOT))]
        for side, tree in order if r % 2 == 0 else order[::-1]:
            runs[side].append(one(tree, args.calls))
        loads.append(os.getloadavg()[0])
    print(f"loop thread CPU a piece, us (median of {args.rounds} rounds' medians, {args.calls} calls each); "
          f"load {' -> '.join(f'{x:.1f}' for x in loads)}")
    print(f"{'piece':70s} {'base':>8s} {'this':>8s}")
    keys = [k for k in runs["base"][0] if all(k in r for r in runs["base"] + runs["this"])]
    totals = {"base": 0.0, "this": 0.0}
    for k in keys:
        a = statistics.median(r[k] for r in runs["base"])
        b = statistics.median(r[k] for r in runs["this"])
        totals["base"] += a
        totals["this"] += b
        print(f"{k[:70]:70s} {a:8.1f} {b:8.1f}")
    print(f"{'sum of the pieces':70s} {totals['base']:8.1f} {totals['this']:8.1f}")


if __name__ == "__main__":
    main()
