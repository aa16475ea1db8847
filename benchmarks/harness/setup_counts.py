"""The embedded default's set-up counted, not timed (issue 21, cold start): one in-process
``running_gateway`` as ``serve`` over stdio assembles it (imports done before the count), this tree against
another (``--base``), alternated. Per start: the catalog's builds, the Python calls spent in them, and every
Python call (``call`` and ``c_call`` events) on the loop thread from the set-up's start to the assembled
gateway. Each tree keeps its data dir across its starts (a first, uncounted start writes its pins, as an
install's first start does), so the rows are a steady state's.

    python benchmarks/harness/setup_counts.py --base /path/to/main [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

ONE_START = """
import sys, anyio
from sentinel_mcp.config import load_config
from sentinel_mcp.gateway import catalog
from sentinel_mcp.gateway.builtin_description import RECORDED
from sentinel_mcp.app.runtime import running_gateway
builds, in_builds, calls = [0], [0], [0]
real = catalog.Catalog.rebuild

def count(frame, event, arg):
    if event in ("call", "c_call"):
        calls[0] += 1

def rebuild(self, upstreams):
    builds[0] += 1
    before = calls[0]
    try:
        return real(self, upstreams)
    finally:
        in_builds[0] += calls[0] - before

catalog.Catalog.rebuild = rebuild

async def main():
    config = load_config(None)
    sys.setprofile(count)
    async with running_gateway(config, default_session="stdio", deferrable=RECORDED) as rt:
        sys.setprofile(None)
        print(builds[0], in_builds[0], calls[0], len(rt.manager.catalog.tools))

anyio.run(main)
"""


def one(tree: Path, data: Path) -> tuple[int, int, int, int]:
    env = {**os.environ, "PYTHONPATH": str(tree), "SENTINEL_DATA_DIR": str(data)}
    env.pop("SENTINEL_CONFIG", None)
    out = subprocess.run([sys.executable, "-c", ONE_START], env=env, cwd=tree, capture_output=True, text=True,
                         timeout=300, check=True)
    builds, in_builds, calls, tools = (int(x) for x in out.stdout.split()[-4:])
    return builds, in_builds, calls, tools


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    trees = {"base": args.base.resolve(), "this": ROOT}
    with tempfile.TemporaryDirectory() as tmp:
        for label, tree in trees.items():
            one(tree, Path(tmp) / label)  # the install's first start: its pins written
        print("| tree | catalog builds | calls in them | loop-thread calls, set-up | tools |")
        print("|---|---|---|---|---|")
        for _ in range(args.runs):
            for label, tree in trees.items():
                builds, in_builds, calls, tools = one(tree, Path(tmp) / label)
                print(f"| {label} | {builds} | {in_builds:,} | {calls:,} | {tools} |", flush=True)


if __name__ == "__main__":
    main()
