"""The thread CPU of one audit row alone (``AuditLog.write(alone=True)``, committed on the calling thread),
two trees alternated in processes of their own (perf-rows9), each row written after the caches were churned
(``cold``: 1,000 lists of 200 ints summed first, ~1.6 MB read, as the rest of a call churns them on the call
path) or straight after the last (``hot``). A call's decision and outcome rows in turn, on tmpfs unless
``--dir``: ``--shape noop`` (the shapes ``stdio_call_trace`` sees: no arguments, no proof) or ``args`` (a
call of the airline's kind: three short text arguments and a rulebase's proof, one object each a call, both
rows of a call naming it, as ``CallRecord`` writes them). Prints the median and mean us a row per tree and
mode, with the load.
Usage: python benchmarks/harness/row_cpu_ab.py --base /work/main [--rows 3000] [--rounds 3] [--dir /dev/shm]
       [--shape noop|args] [--calls]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


async def child(rows: int, where: str, cold: bool, shape: str = "noop") -> list[int]:
    from sentinel_mcp.gateway.audit import AuditEntry, AuditLog, new_decision_id
    from sentinel_mcp.gateway.call_timings import CallTimings

    call: dict[str, Any] = {}

    def entry(i: int, event: str) -> AuditEntry:
        tm = CallTimings()
        tm.guard_s, tm.forward_s = 0.0000231 + i * 1e-9, 0.00078 if event == "outcome" else 0.0
        if event == "decision" or not call:  # a call's two rows name one id, one arguments and proof object
            call.update(decision_id=new_decision_id(), arguments={}, proof=None)
            if shape == "args":
                call["arguments"] = {"reservation_id": f"ZFA{i:04d}", "reason": "change of plan",
                                     "user_id": "mia_li_3668"}
                call["proof"] = {"fetches": [], "passes": 1, "rulebase": "c" * 64, "tree": {"all": [
                    {"by": {"fact": f"reservation_user(ZFA{i:04d}, mia_li_3668)"}, "policy": None,
                     "require": "only the reservation's own user may cancel it"}]}}
        return AuditEntry(
            session="7c1e0f3a9b2d4e6f8a1b2c3d4e5f6a7b", client="bench", origin="client", tool="tb__noop",
            decision="allow", outcome="forwarded" if event == "decision" else "ok", event=event,
            policy_version="v1:abcdef", latency_ms=0.123456 + i * 1e-6,
            timings=tm.as_dict(), reason="allowed", upstream="tb", arg_digest="a" * 64, **call)

    log = await AuditLog(Path(tempfile.mkdtemp(dir=where)) / "audit.db").open()
    for i in range(200):
        await log.write(entry(i, "decision"), alone=True)
    junk = [list(range(200)) for _ in range(1000)]
    spent = []
    counted = cProfile.Profile() if os.environ.get("ROW_CALLS") else None  # ``--calls``
    for i in range(rows):
        e = entry(i, ("decision", "outcome")[i % 2])
        if cold:
            for j in junk:
                sum(j)
        t = time.thread_time_ns()
        if counted is not None:
            counted.enable()
        await log.write(e, alone=True)
        if counted is not None:
            counted.disable()
        spent.append(time.thread_time_ns() - t)
    await log.close()
    if counted is not None:  # Python function calls a row (cProfile's count, C functions too): no timing
        calls = sum(v[1] for v in pstats.Stats(counted).stats.values())  # type: ignore[attr-defined]
        return [round(calls / rows, 1)]
    return spent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base")
    ap.add_argument("--rows", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default="/dev/shm")
    ap.add_argument("--shape", choices=["noop", "args"], default="noop")
    ap.add_argument("--calls", action="store_true", help="Python function calls a row instead of times")
    ap.add_argument("--child", choices=["cold", "hot"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(child(args.rows, args.dir, args.child == "cold", args.shape))))
        return
    if not args.base:
        ap.error("--base is required")
    if args.calls:
        for side, tree in (("base", args.base), ("this", str(ROOT))):
            out = subprocess.run(
                [sys.executable, __file__, "--child", "hot", "--rows", str(args.rows), "--dir", args.dir,
                 "--shape", args.shape], env={**os.environ, "PYTHONPATH": tree, "ROW_CALLS": "1"}, cwd=tree,
                capture_output=True, text=True, check=True)
            print(f"  {side}: {json.loads(out.stdout)[0]} Python calls a row ({args.shape})")
        return
    got: dict[tuple[str, str], list[int]] = {}
    loads = [os.getloadavg()[0]]
    for r in range(args.rounds):
        for mode in ("cold", "hot"):
            sides = [("base", args.base), ("this", str(ROOT))]
            for side, tree in sides if r % 2 == 0 else sides[::-1]:
                out = subprocess.run(
                    [sys.executable, __file__, "--child", mode, "--rows", str(args.rows), "--dir", args.dir,
                     "--shape", args.shape],
                    env={**os.environ, "PYTHONPATH": tree}, cwd=tree, capture_output=True, text=True,
                    check=True)
                got.setdefault((side, mode), []).extend(json.loads(out.stdout))
        loads.append(os.getloadavg()[0])
    print(f"thread CPU of one audit row alone, us ({args.shape}; {args.rounds} rounds x {args.rows} rows a "
          "side, "
          f"{args.dir}); load {' -> '.join(f'{x:.1f}' for x in loads)}")
    for mode in ("cold", "hot"):
        a, b = got[("base", mode)], got[("this", mode)]
        print(f"  {mode}: base median {statistics.median(a) / 1e3:6.1f} mean {statistics.fmean(a) / 1e3:6.1f}"
              f"   this median {statistics.median(b) / 1e3:6.1f} mean {statistics.fmean(b) / 1e3:6.1f}")


if __name__ == "__main__":
    main()
