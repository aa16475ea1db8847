"""Where ``PolicyGuard.decide``'s time goes beyond the Prolog pass (issue 21): the airline cancel guard with
every fact present and 100k other facts (``guard_latency.py``'s set-up), a lazy proof, on the caller's thread.

Each row is a loop of N calls, each timed (perf_counter_ns), the mean per call; rounds interleaved, the median
of the rounds (means include the slow tail, so they sit above the p50 of ``guard_latency.py``):

- the one C call of the decision (``sn_decide_inline`` through ``PrologCall``), repeated alone;
- a trivial predicate of the same nine arguments through ``PrologCall`` (the C interface's own cost);
- ``PolicyGuard.decide`` whole (driven without an event loop: it does not wait when decided here);
- ``PolicyGuard.decide`` with the C call replaced by its answer text (the Python plumbing alone), timed
  alone, then timed right after a real decision, and right after the trivial predicate.

The last two rows show the plumbing's cost depends on what ran just before it (caches and branch predictors
the Prolog pass leaves cold): that interaction, not any one Python step, is most of the gap between the pass
and ``decide``.

Usage: python benchmarks/harness/decide_interaction.py [--calls 2000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
import guard_latency as gl  # noqa: E402
from sentinel_mcp.policy import engine  # noqa: E402
from sentinel_mcp.policy.prolog_call import PrologCall  # noqa: E402


def driven(coro: Any) -> Any:
    """A coroutine that never waits, run to its end without an event loop turn."""
    try:
        coro.send(None)
    except StopIteration as e:
        return e.value
    raise RuntimeError("the decision waited (not decided on this thread)")


def per_call_us(before: Callable[[], Any], work: Callable[[], Any], n: int) -> float:
    clock, total = time.perf_counter_ns, 0
    for _ in range(n):
        before()
        t0 = clock()
        work()
        total += clock() - t0
    return total / n / 1000


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--facts", type=int, default=100_000)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-interaction-"))
    async with gl.allowed_airline_guard(tmp, args.facts) as (guard, c):
        guard.fast_path = guard.lazy_proofs = True  # the gateway's guard: compiled rules, proofs kept
        rb = guard.rulebases.current
        mod = guard.knowledge.ready(c.session_id, rb)
        assert mod is not None
        key = (rb.module, mod, time.time(), c.identity, engine.call_args_text(c.arguments), c.digest,
               rb.version, engine.INLINE_INFERENCES)
        await guard.engine.goal("( current_predicate(user:sn_bench_noop/9) -> true ; "
                                "assertz(user:sn_bench_noop(_,_,_,_,_,_,_,_,'x')) )")
        noop = PrologCall("user", "sn_bench_noop", 9)
        real = engine._SN_DECIDE_INLINE
        answer = real(*key)

        def decide() -> Any:
            out = driven(guard.decide(c))
            assert isinstance(out, gl.Allow), out
            return out

        def plumbing() -> Any:  # decide, the C call answered by its text
            engine._SN_DECIDE_INLINE = lambda *a: answer  # type: ignore[assignment]
            try:
                return decide()
            finally:
                engine._SN_DECIDE_INLINE = real

        nothing: Callable[[], Any] = lambda: None  # noqa: E731
        rows: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
            "the decision's C call (sn_decide_inline), alone": (nothing, lambda: real(*key)),
            "a trivial predicate of nine arguments through PrologCall": (nothing, lambda: noop(*key)),
            "PolicyGuard.decide, whole": (nothing, decide),
            "decide's Python plumbing alone (the C call answered by its text)": (nothing, plumbing),
            "the same plumbing, right after a real decision": (lambda: real(*key), plumbing),
            "the same plumbing, right after the trivial predicate": (lambda: noop(*key), plumbing),
        }
        times: dict[str, list[float]] = {k: [] for k in rows}
        for _ in range(args.rounds):
            for label, (before, work) in rows.items():
                times[label].append(per_call_us(before, work, args.calls))
        await guard.engine.goal("sentinel_core:sn_drop_kept_proofs")
    print(f"airline cancel guard, {args.facts} other facts, {args.calls} calls x {args.rounds} rounds "
          f"(interleaved); mean per call, us: median of rounds (best)")
    for label, t in times.items():
        print(f"  {label:70s} {statistics.median(t):8.1f} ({min(t):.1f})")


if __name__ == "__main__":
    asyncio.run(main())
