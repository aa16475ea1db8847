"""What the audit anchor costs (``gateway/audit_anchor.py``): one append (flock, tail read, write, fsync) as a
gateway does at most every ``ANCHOR_EVERY`` seconds, and reading + checking the file as ``audit verify`` does.
Its cost per call is nil by construction (nothing on a call's path); compare CPU per call with
``benchmarks/harness/capacity_ab.py --base <main>``.

Usage: python benchmarks/audit_anchor.py [--appends N] [--dir PATH] (PATH: where to write, default a temp dir
on the real disk, as the anchor would be)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sentinel_mcp.gateway.audit_anchor import AnchorLog, Head  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--appends", type=int, default=200)
    ap.add_argument("--dir", default=str(Path.home() / ".cache"))
    args = ap.parse_args()
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        data, anchor_dir = Path(tmp) / "data", Path(tmp) / "anchor"
        data.mkdir()
        log = AnchorLog(anchor_dir, data)
        key = log.open_for_writing()
        wall0, cpu0 = time.perf_counter(), time.process_time()
        for i in range(args.appends):
            head = Head("instances/x/sentinel.db", "x", i * 2, f"{i:064x}")
            log.append(key, [("head", head)], lambda: [])
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        n = args.appends
        print(f"append (fsync'd)     {wall / n * 1e3:7.3f} ms wall  {cpu / n * 1e3:7.3f} ms CPU   "
              "goal: well under ANCHOR_EVERY (2 s), off the call path")
        wall0, cpu0 = time.perf_counter(), time.process_time()
        records = log.read(key)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        print(f"verify read+MACs     {wall / len(records) * 1e6:7.1f} us/record wall  "
              f"{cpu / len(records) * 1e6:7.1f} us/record CPU  ({len(records)} records, "
              f"{os.path.getsize(log.path) / len(records):.0f} bytes each)   "
              "goal: a day of anchors in seconds")


if __name__ == "__main__":
    main()
