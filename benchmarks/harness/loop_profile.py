"""Where the event loop thread's time goes under the capacity load (issue 21, the per-stage table).

Starts this tree's gateway as ``pipeline_capacity.py`` does (in-process no-op built-in, durable audit),
puts 16 wrk connections on it and samples the event loop thread with py-spy (``--gil``, 200 Hz) meanwhile;
each sample is counted once, in the deepest stage its stack reaches. Prints the share of each stage, the
rate, the server's CPU per call and wrk's CPU share.

Usage: python benchmarks/harness/loop_profile.py [--seconds 12]   (needs ``py-spy`` from PyPI and ``wrk``)
"""

from __future__ import annotations

import argparse
import collections
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(HERE), str(ROOT / "benchmarks")]
import pipeline_capacity as pc  # noqa: E402
from load import call_body, call_headers, check_call, wrk  # noqa: E402
from tests.conftest import stop_process  # noqa: E402

# (stage, substrings of a frame "function (file)"), deepest match wins; checked from the leaf up
STAGES: list[tuple[str, tuple[str, ...]]] = [
    ("uvicorn/h11: parsing, socket writes", ("uvicorn/protocols", "h11/")),
    ("Starlette middleware/routing", ("starlette/",)),
    ("SDK HTTP transport (session manager, modern handler)", ("streamable_http",)),
    ("SDK kernel (serve_one, runner, OTel, validation, dump)", ("mcp/server/runner", "opentelemetry",
                                                              "mcp/server/lowlevel", "mcp/shared/inbound",
                                                              "mcp_types/")),
    ("lean path's own code", ("app/lean_calls",)),
    ("CallerGuard + WireGuard", ("app/http_app", "wire_guard", "wire_limits", "identity/")),
    ("in-process built-in (direct call or SDK in memory)", ("builtin_direct", "noop_builtin",
                                                          "mcp/client", "mcp/shared/memory",
                                                          "mcp/shared/direct")),
    ("audit rows", ("audit", "call_record", "sentinel_mcp/storage/")),
    ("guard (Python side)", ("sentinel_mcp/guard/", "policy")),
    ("front, conversations, sealed session", ("gateway/front", "conversation", "sealed", "asking")),
    ("gateway execute, routing, validation", ("sentinel_mcp/gateway/",)),
]


def stage_of(stack: str) -> str:
    frames = stack.split(";")
    for frame in reversed(frames):
        for name, keys in STAGES:
            if any(k in frame for k in keys):
                return name
    return "event loop, selector, threads, other"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=12.0)
    ap.add_argument("--rate", type=int, default=200)
    ap.add_argument("--top", type=int, default=0, help="also list the N Sentinel functions most often on the "
                    "loop thread's stacks (inclusive) and the N most often at their top (self)")
    args = ap.parse_args()
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-prof-"))
    pc.PY = sys.executable
    proc, url = pc.sentinel(tmp, {}, ["bench"], "prof")
    try:
        body, headers = call_body("bench__noop"), call_headers("bench__noop")
        check_call(url, "bench__noop")
        wrk(url, body, headers, seconds=2, server_pid=proc.pid)  # warm up
        out = tmp / "stacks.txt"
        record = [spy, "record", "--gil", "-r", str(args.rate), "-d", str(int(args.seconds)), "-f", "raw",
                  "--threads", "-o", str(out), "--pid", str(proc.pid)]
        result: list = []
        load = threading.Thread(target=lambda: result.append(
            wrk(url, body, headers, seconds=args.seconds + 1, server_pid=proc.pid)))
        load.start()
        subprocess.run(record, check=True, capture_output=True)
        load.join()
    finally:
        stop_process(proc)
    # --threads: each stack starts with its thread; the loop thread is the one running uvicorn
    by_thread: dict[str, list[tuple[str, int]]] = collections.defaultdict(list)
    for line in out.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        thread, _, rest = stack.partition(";")
        by_thread[thread].append((rest, int(count)))
    loop = max(by_thread, key=lambda t: sum(n for s, n in by_thread[t] if "uvicorn/" in s))
    shares: collections.Counter[str] = collections.Counter()
    for stack, n in by_thread[loop]:
        shares[stage_of(stack)] += n
    total = sum(shares.values()) or 1
    others = sum(n for t, rows in by_thread.items() if t != loop for _, n in rows)
    print(f"loop thread {sum(shares.values())} samples, other threads holding the GIL {others}")
    r = result[0]
    print(f"{pc.fmt(r)}")
    print("| stage | share of the loop thread's samples |\n|---|---|")
    for name, n in shares.most_common():
        print(f"| {name} | {100 * n / total:.1f} % |")
    if args.top:
        inclusive: collections.Counter[str] = collections.Counter()
        leaf: collections.Counter[str] = collections.Counter()
        for stack, n in by_thread[loop]:
            frames = stack.split(";")
            leaf[frames[-1]] += n
            for frame in set(frames):
                if "sentinel_mcp/" in frame:
                    inclusive[frame] += n
        for title, counter in (("Sentinel functions, inclusive", inclusive), ("self", leaf)):
            print(f"| {title} | share |\n|---|---|")
            for frame, n in counter.most_common(args.top):
                print(f"| {frame[:110]} | {100 * n / total:.1f} % |")


if __name__ == "__main__":
    main()
