"""CPU per durable write and per read through the storage seam's SQLite writer, this tree against another.

16 concurrent writers (group commit), then sequential reads, in a fresh file; each tree in its own process,
interleaved, so load on the machine falls on both alike. CPU (process time, the writer thread included) is the
figure to read on a loaded machine; wall time is printed for reference.
Usage: python benchmarks/seam_writer_ab.py --base /work/main [--writes N] [--rounds R]
Goal: no worse than the base tree (the shared writer thread, ``storage/job_writer.py``, is a refactor).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ONE_RUN = """
import asyncio, sys, tempfile, time
from pathlib import Path
from sentinel_mcp.storage import Schema, open_database
from sentinel_mcp.storage.open import release

SCHEMA = Schema("b", {"sqlite": ["CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT)"]})
N, WRITERS = int(sys.argv[1]), 16

async def main():
    with tempfile.TemporaryDirectory() as d:
        db = open_database(Path(d) / "b.db", "b")
        await db.migrate(SCHEMA)
        async def writer(k):
            for i in range(N // WRITERS):
                await db.write("INSERT INTO t (x) VALUES (?)", (f"{k}-{i}",))
        c0, w0 = time.process_time(), time.perf_counter()
        await asyncio.gather(*[writer(k) for k in range(WRITERS)])
        c1, w1 = time.process_time(), time.perf_counter()
        for i in range(N // 4):
            await db.query("SELECT x FROM t WHERE id = ?", (i + 1,))
        c2 = time.process_time()
        await release(db)
    print((c1 - c0) / N * 1e6, (w1 - w0) / N * 1e6, (c2 - c1) / (N // 4) * 1e6)

asyncio.run(main())
"""


def run(tree: Path, writes: int) -> list[float]:
    python = tree / ".venv" / "bin" / "python"
    out = subprocess.run([str(python), "-c", ONE_RUN, str(writes)], cwd=tree, capture_output=True, text=True,
                         check=True).stdout
    return [float(x) for x in out.split()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--writes", type=int, default=8000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    got: dict[str, list[list[float]]] = {"base": [], "tree": []}
    for _ in range(args.rounds):
        got["base"].append(run(args.base, args.writes))
        got["tree"].append(run(ROOT, args.writes))
    print("row                          base (median)   this tree (median)   goal")
    for i, what in enumerate(("CPU per write (us)", "wall per write (us)", "CPU per read (us)")):
        base = statistics.median(r[i] for r in got["base"])
        tree = statistics.median(r[i] for r in got["tree"])
        print(f"{what:28s} {base:10.1f}      {tree:10.1f}           no worse than base")


if __name__ == "__main__":
    sys.exit(main())
