"""Where an allow's proof rendering goes, and the rows around it, for one source tree (run it from each tree,
alternated, to compare: ``cd TREE && PYTHONPATH=TREE python benchmarks/harness/proof_stages.py``).

The airline cancel guard of ``hot_path.py`` (the real airline example server, every fact fetched, 100k other
facts, the proof kept and rendered when read as the gateway's guard does). Prints, medians of ``--decisions``:
- rows: ``PolicyGuard.decide``; decide + its proof rendered (the gateway's guard, for the audit row); decide
  from a thread without its own SWI-Prolog engine (a job); each as wall p50 / process CPU per decision;
- stages of one rendering, timed one by one: the kept tree read as a term in C (``sn_kept_proof_term/2``:
  the tree's JSON terms and the C reader), ``sn_forget_kept_proof/2``, ``quote_tree`` (the citations);
- inside the engine (its CPU clock): ``sn_kept_proof_term/2`` and its inferences.
Usage: python benchmarks/harness/proof_stages.py [--decisions 300]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT.parent), str(ROOT)]
import guard_latency as gl  # noqa: E402

from sentinel_mcp.core.lazy_proof import rendered_proof  # noqa: E402
from sentinel_mcp.policy import engine as E  # noqa: E402


async def loop(guard: Any, c: Any, n: int, render: bool) -> tuple[float, float]:
    """(wall p50, process CPU per decision), in microseconds."""
    wall = []
    cpu = time.process_time()
    for _ in range(n):
        t = time.perf_counter()
        d = await guard.decide(c)
        if render:
            await rendered_proof(d.proof)
        wall.append(time.perf_counter() - t)
    return statistics.median(wall) * 1e6, (time.process_time() - cpu) / n * 1e6


def kept_id(d: Any) -> int:
    return int(d.proof._render.args[1].id)  # partial(PolicyGuard._rendered_kept, rb, kept)


async def measure(tmp: Path, n: int) -> None:
    async with gl.allowed_airline_guard(tmp, 100_000) as (guard, c):
        guard.fast_path = guard.lazy_proofs = True
        for _ in range(30):
            await rendered_proof((await guard.decide(c)).proof)
        rows = {"decide": await loop(guard, c, n, False)}
        rows["decide + render"] = await loop(guard, c, n, True)
        job: list[tuple[float, float]] = []
        t = threading.Thread(target=lambda: job.append(asyncio.run(loop(guard, c, n, False))))
        t.start()
        await asyncio.to_thread(t.join)
        rows["job (a thread without an engine)"] = job[0]
        term, forget, quote = [], [], []
        docs = guard.documents(guard.rulebases.current)
        for _ in range(n):
            kid = kept_id(await guard.decide(c))
            a = time.perf_counter()
            out = E._SN_KEPT_TERM.json_call(-1, kid)
            b = time.perf_counter()
            E._SN_FORGET_KEPT(kid)
            f = time.perf_counter()
            docs.quote_tree(out["tree"])
            term.append(b - a)
            forget.append(f - b)
            quote.append(time.perf_counter() - f)
        kid = kept_id(await guard.decide(c))
        q = (f"statistics(inferences, I0), statistics(cputime, T0), forall(between(1, 2000, _), "
             f"sentinel_core:sn_kept_proof_term({kid}, _)), statistics(cputime, T1), "
             f"statistics(inferences, I1), X is (T1 - T0) / 2000 * 1e6, I is (I1 - I0) / 2000")
        r = (await guard.engine.run(lambda p: list(p.query(q, maxresult=1))))[0]
    print(" | ".join(f"{k} {w:.0f} / {cpu:.0f} us" for k, (w, cpu) in rows.items()) + " (wall p50 / CPU)")
    med = lambda xs: statistics.median(xs) * 1e6  # noqa: E731
    print(f"stages: kept tree as a term in C {med(term):.0f} us | forget {med(forget):.0f} us | quote_tree "
          f"{med(quote):.0f} us | in the engine: sn_kept_proof_term {float(r['X']):.0f} us CPU, "
          f"{float(r['I']):.0f} inferences")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--decisions", type=int, default=300)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(measure(Path(tmp), args.decisions))


if __name__ == "__main__":
    main()
