"""What signing the shared facts costs (``policy/signed_facts.py``): a tool result's facts written to a
PostgreSQL fact store (``FactStore.learn_rows``, ``FACTS`` facts as one read teaches) and a session's facts
read back (``FactStore.valid``), per operation: wall time (median, p90) and this process's CPU time (the
event loop's and the store's threads': what signing and checking add), over ``--rounds``.

Run it from each tree to compare (the tree the script sits in is imported), alternated:
``python benchmarks/harness/pg_signed_facts.py [--rounds 300]`` (starts its own throwaway PostgreSQL; as
root the server runs as the ``postgres`` user). ``--sign-only`` times the MAC alone (no database).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from sentinel_mcp.policy.fact_rows import learned  # noqa: E402
from sentinel_mcp.policy.fact_store import FactStore  # noqa: E402
from sentinel_mcp.storage.local_server import LocalServer, free_port  # noqa: E402

FACTS = 26  # what one read of the airline example teaches (issue 21)


def extracted(i: int) -> list[dict[str, object]]:
    return [{"predicate": "booking_field", "args": [f"BK-{i}", f"field{j}", f"value {j} of {i}"],
             "fact": f"booking_field('BK-{i}',field{j},'value {j} of {i}')", "ttl": 600.0}
            for j in range(FACTS)]


def summary(name: str, wall: list[float], cpu: list[float]) -> str:
    wall.sort()
    p90 = wall[len(wall) * 9 // 10]
    return (f"{name}: wall median {statistics.median(wall) * 1e3:.3f} ms, p90 {p90 * 1e3:.3f} ms; "
            f"cpu median {statistics.median(cpu) * 1e6:.0f} us, mean {statistics.fmean(cpu) * 1e6:.0f} us")


async def run(url: str, rounds: int) -> None:
    store = await FactStore(url).open()
    try:
        for i in range(20):  # warm: connections, statement cache
            await store.learn_rows(learned(f"warm{i}", "bk__get", f"d{i}", extracted(i), time.time()))
            await store.valid(f"warm{i}")
        writes: tuple[list[float], list[float]] = ([], [])
        reads: tuple[list[float], list[float]] = ([], [])
        for i in range(rounds):
            rows = learned(f"s{i}", "bk__get", f"d{i}", extracted(i), time.time())
            w0, c0 = time.perf_counter(), time.process_time()
            await store.learn_rows(rows)
            w1, c1 = time.perf_counter(), time.process_time()
            got = await store.valid(f"s{i}")
            w2, c2 = time.perf_counter(), time.process_time()
            assert len(got) == FACTS, len(got)
            writes[0].append(w1 - w0)
            writes[1].append(c1 - c0)
            reads[0].append(w2 - w1)
            reads[1].append(c2 - c1)
        print(summary(f"write {FACTS} facts", *writes))
        print(summary(f"read {FACTS} facts", *reads))
    finally:
        await store.close()


def sign_only(rounds: int) -> None:
    from sentinel_mcp.policy import signed_facts
    from sentinel_mcp.storage.row_signature import PROCESS_KEY

    rows = [learned(f"s{i}", "bk__get", f"d{i}", extracted(i), time.time()).rows for i in range(rounds)]
    t0 = time.perf_counter()
    macs = [signed_facts.signed(PROCESS_KEY, r) for r in rows]
    t1 = time.perf_counter()
    ok = all(signed_facts.genuine(PROCESS_KEY, row) for m in macs for row in m)
    t2 = time.perf_counter()
    n = rounds * FACTS
    print(f"sign {(t1 - t0) / n * 1e6:.2f} us/fact, check {(t2 - t1) / n * 1e6:.2f} us/fact ({ok})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--sign-only", action="store_true")
    args = parser.parse_args()
    if args.sign_only:
        sign_only(args.rounds)
        return
    root = Path(tempfile.mkdtemp(prefix="sentinel-pg-bench-"))
    server = LocalServer(root / "pg", free_port())
    try:
        server.init().start()
        asyncio.run(run(server.url, args.rounds))
    finally:
        server.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
