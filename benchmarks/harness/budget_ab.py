"""A decision's wall-clock budget, the two ways, interleaved in one process (a busy shared machine moves a
timing between processes by a third; side by side, call by call, both ways see the same machine).

The airline cancel guard (every fact present, 100k other facts: ``guard_latency.py``'s set-up), its C call on
the caller's thread (``sn_decide_inline``): as the tree has it (``within_budget/2``, decision_watch.pl: the
deadline written where one watching thread reads it) against the same decision under call_with_time_limit/2
(an alarm of library(time)'s scheduler thread installed and removed per decision, as before 2026-12-04).
Prints per round the wall p50 / p90 and the calling thread's CPU p50 of each, in us.

Usage: python benchmarks/harness/budget_ab.py [--calls 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent), str(HERE.parent)]
import guard_latency as gl  # noqa: E402
from sentinel_mcp.core import process_clock  # noqa: E402
from sentinel_mcp.policy import engine  # noqa: E402
from sentinel_mcp.policy.prolog_call import PrologCall  # noqa: E402

# sn_decide_inline/9 with call_with_time_limit/2 around the decision, as call_decisions.pl had it
ALARMED = """assertz((user:sn_bench_alarmed(RB, S, Now, Tool, Args, D, V, Cap, Out) :-
    setup_call_cleanup(( nb_linkval(sn_capped, true), nb_linkval(sn_compact, true) ),
        ( sentinel_core:decision_seconds(Sec),
          catch(call_with_time_limit(Sec,
                                     sentinel_core:decide_within(RB, S, Now, Tool, Args, D, V, Cap, Out0)),
                time_limit_exceeded, sentinel_core:timed_out_answer(Out0)),
          Out = Out0 ),
        ( nb_linkval(sn_compact, false), nb_linkval(sn_capped, false) ))))"""


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    async with gl.allowed_airline_guard(Path(tempfile.mkdtemp(prefix="sentinel-budget-")), 100_000) as (g, c):
        g.fast_path = g.lazy_proofs = True
        rb = g.rulebases.current
        mod = g.knowledge.ready(c.session_id, rb)
        key = (rb.module, mod, process_clock.now(), c.identity, engine.call_args_text(c.arguments), c.digest,
               rb.version, engine.INLINE_INFERENCES)
        await g.engine.goal(f"( current_predicate(user:sn_bench_alarmed/9) -> true ; {ALARMED} )")
        ways = {"alarm (call_with_time_limit)": PrologCall("user", "sn_bench_alarmed", 9),
                "watcher (within_budget)": engine._SN_DECIDE_INLINE}
        for f in ways.values():
            assert f(*key).startswith('{"status":"proved"'), f(*key)
        clock, cpu = time.perf_counter_ns, time.thread_time_ns
        for r in range(args.rounds):
            walls: dict[str, list[float]] = {k: [] for k in ways}
            cpus: dict[str, list[float]] = {k: [] for k in ways}
            order = list(ways.items())
            for i in range(args.calls):
                for name, f in (order if i % 2 else order[::-1]):
                    t0, c0 = clock(), cpu()
                    f(*key)
                    cpus[name].append((cpu() - c0) / 1000)
                    walls[name].append((clock() - t0) / 1000)
            await g.engine.goal("sentinel_core:sn_drop_kept_proofs")
            print(f"round {r + 1}: " + "; ".join(
                f"{k} wall p50 {statistics.median(w):.1f} p90 {sorted(w)[int(len(w) * 0.9)]:.1f}, "
                f"CPU p50 {statistics.median(cpus[k]):.1f}" for k, w in walls.items()), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
