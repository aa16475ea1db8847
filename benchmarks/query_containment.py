"""The cost of containing client goals, side by side in one run.

Rows: the allow-list check of a whole client goal (in the engine, per check), the same goal proved by the
engine directly (what a query cost before containment, no check), and ``sentinel_query`` end to end through
the query worker process (session copy up to date) - each with its goal beside it. The airline rulebase
and a session with the user's facts loaded.
Usage: python benchmarks/query_containment.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sentinel_mcp.paths import RULEBASES_DIR  # noqa: E402
from sentinel_mcp.policy.guard import PolicyGuard  # noqa: E402
from sentinel_mcp.policy.policy_service import PolicyService  # noqa: E402
from sentinel_mcp.policy.prolog_text import quote_atom  # noqa: E402

GOALS = {
    "small goal (2 calls)": "current_user(U), free_bags_per_passenger(gold, economy, N)",
    "large goal (24 calls, findall, aggregate)": ", ".join(
        [
            "findall(M-C-N, free_bags_per_passenger(M, C, N), Bags)",
            "aggregate_all(sum(N), member(_-_-N, Bags), T)",
        ]
        + [f"atom_length(abc{i}, L{i})" for i in range(22)]
    ),
}


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


async def engine_loop(guard: PolicyGuard, rb: str, session: str, goal: str, n: int, check: bool) -> float:
    """Microseconds per iteration of the check (or of a direct proof) inside the engine."""
    inner = (
        f"sentinel_core:check_goal(client, {quote_atom(rb)}, G)"
        if check
        else f"sentinel_core:begin_query({quote_atom(rb)}, {quote_atom(session)}, 1.0e9), "
        "findall(T, sentinel_core:prove(G, T), _)"
    )
    text = (
        f"term_string(G, {quote_atom(goal)}), get_time(T0), "
        f"forall(between(1, {n}, _), ({inner})), get_time(T1), Us is (T1 - T0) * 1.0e6 / {n}"
    )

    def job(p: object) -> float:
        return float(list(p.query(text, maxresult=1))[0]["Us"])  # type: ignore[attr-defined]

    return await guard.engine.run(job)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=300)
    args = ap.parse_args()
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        guard = PolicyGuard(
            [RULEBASES_DIR / "default.pl", RULEBASES_DIR / "airline.pl"],
            None,
            store_path=Path(tmp) / "facts.db",
            seeds={"current_user": "mia_li_3668"},
        )
        await guard.start(watch=False)
        try:
            rb = guard.rulebases.current
            mod = await guard.knowledge.ensure("bench", rb)
            svc = PolicyService(guard)
            for name, goal in GOALS.items():
                us = await engine_loop(guard, rb.module, mod, goal, args.runs * 10, check=True)
                rows.append(
                    (
                        f"allow-list check, {name}",
                        f"{us:.1f} us",
                        "",
                        "<= 100 us per query (<= 5 us per call)",
                    )
                )
                us = await engine_loop(guard, rb.module, mod, goal, args.runs, check=False)
                rows.append(
                    (
                        f"proved in the engine directly (no check), {name}",
                        f"{us / 1000:.3f} ms",
                        "",
                        "reference",
                    )
                )
                await svc.query("bench", goal)  # worker up, session copied
                times = []
                for _ in range(args.runs):
                    t0 = time.perf_counter()
                    out = await svc.query("bench", goal)
                    times.append((time.perf_counter() - t0) * 1000)
                    assert out.status == "proved", out
                rows.append(
                    (
                        f"sentinel_query via the query worker, {name}",
                        f"{pct(times, 0.5):.3f} ms",
                        f"{pct(times, 0.99):.3f} ms",
                        "<= 5 ms p50",
                    )
                )
            # a changed session is copied again before the next query (what a fetch or an answer costs)
            times = []
            for i in range(min(args.runs, 100)):
                await guard.knowledge.add(
                    [await guard.knowledge.new_fact("bench", "today", [f"2024-05-{i:02d}"], "seed")]
                )
                t0 = time.perf_counter()
                await svc.query("bench", GOALS["small goal (2 calls)"])
                times.append((time.perf_counter() - t0) * 1000)
            rows.append(
                (
                    "sentinel_query after the session changed (copy + query)",
                    f"{pct(times, 0.5):.3f} ms",
                    f"{pct(times, 0.99):.3f} ms",
                    "<= 10 ms p50",
                )
            )
        finally:
            await guard.close()
    w = max(len(r[0]) for r in rows)
    print(f"{'case':{w}}  {'p50':>12}  {'p99':>12}  goal")
    for name, p50, p99, goal in rows:
        print(f"{name:{w}}  {p50:>12}  {p99:>12}  {goal}")
    print(f"({args.runs} timed queries per row; engine loops report the mean per iteration)")


if __name__ == "__main__":
    asyncio.run(main())
