"""The audit rows' seal (``gateway/audit_seal.py``): what it adds a row, in one process, side by side.
(0. The MAC alone: ``hmac.digest`` against ``Sealer``, its keyed sha256 states copied a row.)

1. The link of a row (its chained hash, and with a key its MAC, ``audit._link``) over the canonical text of a
   usual call's row, without and with a key, in alternating blocks: µs a row each, and the ratio.
2. Whole durable writes (``AuditLog.write``) to two SQLite logs in one directory, one unkeyed and one keyed,
   alternating blocks of sequential writes: CPU µs a write each (the process's, writer thread included).

Usage: python benchmarks/harness/audit_seal_cost.py [--rows 20000] [--writes 600] [--block 50]
Goal: the seal adds under 2 % to a call's CPU (a call is ~1.7 ms of gateway CPU: latency_ab.py), with the
load average.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog, _link, canonical
from sentinel_mcp.gateway.audit_schema import GENESIS
from sentinel_mcp.gateway.audit_seal import Sealer, seal
from sentinel_mcp.storage.row_signature import derived_key

KEY = derived_key(b"benchmark-seal-key-0123456789abcdef", "audit")


def _row_text() -> str:
    log = AuditLog(Path("unused.db"), chain="bench")
    entry = AuditEntry(session="alice/c1", principal="alice", tool="tb__echo", decision="allow", outcome="ok",
                       arguments={"text": "hello"}, reason="read-only tool (fail-safe default)",
                       timings={"ask": 0.0, "fetch": 0.01, "forward": 0.4, "guard": 0.05})
    return canonical(log.row(entry))


def links(rows: int, block: int) -> tuple[float, float]:
    text = _row_text()
    took: dict[bool, list[float]] = {False: [], True: []}
    for i in range(2 * rows // block):
        keyed = bool(i % 2)
        key = Sealer(KEY) if keyed else None
        prev = GENESIS
        start = time.perf_counter()
        for _ in range(block):
            prev, _mac = _link(key, prev, text)
        took[keyed].append((time.perf_counter() - start) / block * 1e6)
    return statistics.median(took[False]), statistics.median(took[True])


async def writes(n: int, block: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as d:
        logs = {False: await AuditLog(Path(d) / "plain.db").open(),
                True: await AuditLog(Path(d) / "sealed.db", key=KEY).open()}
        took: dict[bool, list[float]] = {False: [], True: []}
        try:
            for i in range(2 * n // block):
                keyed = bool(i % 2)
                start = time.process_time()  # CPU of the process (writer thread too): wall time on a busy
                for _ in range(block):  # shared machine swings by more than the seal's cost
                    await logs[keyed].write(AuditEntry(session="alice/c1", principal="alice", tool="tb__echo",
                                                       decision="allow", outcome="ok", arguments={"i": i}),
                                            alone=True)
                took[keyed].append((time.process_time() - start) / block * 1e6)
        finally:
            for log in logs.values():
                await log.close()
    return statistics.median(took[False]), statistics.median(took[True])


def sealers(rows: int, block: int) -> tuple[float, float]:
    """``hmac.digest`` a row against ``Sealer`` (its keyed states copied), alternating blocks."""
    body, sealer = _row_text().encode(), Sealer(KEY)
    assert sealer(body) == seal(KEY, body)
    took: dict[bool, list[float]] = {False: [], True: []}
    for i in range(2 * rows // block):
        copied = bool(i % 2)
        start = time.perf_counter()
        for _ in range(block):
            sealer(body) if copied else seal(KEY, body)
        took[copied].append((time.perf_counter() - start) / block * 1e6)
    return statistics.median(took[False]), statistics.median(took[True])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--writes", type=int, default=600)
    ap.add_argument("--block", type=int, default=50)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()}")
    plain, sealed = links(args.rows, args.block)
    print(f"link a row: unkeyed {plain:.2f} us, keyed {sealed:.2f} us (+{sealed - plain:.2f} us, "
          f"x{sealed / plain:.2f})")
    digest, copied = sealers(args.rows, args.block)
    print(f"seal a row: hmac.digest {digest:.2f} us, Sealer {copied:.2f} us (x{copied / digest:.2f})")
    plain, sealed = asyncio.run(writes(args.writes, args.block))
    added = (sealed / plain - 1) * 100
    print(f"durable write, CPU: unkeyed {plain:.0f} us, keyed {sealed:.0f} us ({added:+.1f} %; "
          "goal < +2 % of a call's CPU, the median of alternating blocks)")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
