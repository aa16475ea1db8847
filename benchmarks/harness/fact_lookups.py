"""Each fact name's look-up by name alone (no key bound: ``current_time(T)``) in ``guard_ab.py``'s guard (the
airline cancel guard, 100k other facts), timed inside the engine, and the JIT's indexes of ``'$fact'/5``
(``jiti_list/1``). A name that shares a bucket of an index of names with the 50k filler facts of a name walks
them on every such look-up (76 us against 0.4 before the facts were kept one table per name, fact_terms.pl),
and which names share one follows the order atoms were made: run it after a change that adds atoms.

Usage: python benchmarks/harness/fact_lookups.py   (from the tree to measure)
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path[:0] = [str(HERE.parents[2]), str(HERE.parents[1]), str(HERE.parent)]

NAMES = ["current_time", "today", "current_user", "reservation_created", "cancel_reason", "airport_city",
         "'$fetched'", "'$context'", "flight_status", "reservation_leg"]


async def main() -> None:
    import guard_latency as gl
    from answered_guard import answered_cancel_guard

    from sentinel_mcp.policy.prolog_text import quote_atom

    with tempfile.TemporaryDirectory() as d:
        async with answered_cancel_guard(gl, Path(d)) as (guard, c):
            for _ in range(20):
                await guard.decide(c)
            s = quote_atom(await guard.knowledge.ensure(c.session_id, guard.rulebases.current))
            q = (f"with_output_to(string(Out), jiti_list({s}:'$fact'/5)), "
                 f"findall(N-Us, ( member(N, [{', '.join(NAMES)}]), statistics(cputime, T0), "
                 f"forall(between(1, 1000, _), \\+ ( {s}:'$fact'(N, _, _, _, _), fail )), "
                 "statistics(cputime, T1), Us is (T1 - T0) * 1000 ), R)")
            rows = await guard.engine.run(lambda p: list(p.query(q, maxresult=1)))
            out = rows[0]["Out"]
            print(out.decode() if isinstance(out, bytes) else out)
            print("look-up by name alone, every answer (us, inside the engine, mean of 1,000):")
            for r in rows[0]["R"]:
                name, us = str(r).removeprefix("-(").removesuffix(")").rsplit(", ", 1)
                print(f"  {name:22s} {float(us):10.2f}")


if __name__ == "__main__":
    asyncio.run(main())
