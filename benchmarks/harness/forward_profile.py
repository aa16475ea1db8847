"""Where the gateway's event-loop thread spends its CPU under the real-upstream row's load (issue 21: through
Sentinel >= 0.9x the direct rate of a real Python MCP upstream, ``"protocol": "modern"``), stage by stage.

Starts the test toolbox over streamable HTTP and this tree's gateway in front of it (default guard, durable
audit: ``upstream_gap.py``'s "through" row), puts ``--connections`` wrk connections on the gateway and
samples its event-loop thread with py-spy meanwhile (non-blocking; idle samples left out). Each sample is
counted once, in the stage of the deepest frame of its stack that names one (so a stage's share is its self
CPU, the asyncio and socket frames beneath it included only when no stage frame is deeper). Prints each
stage's share and the loop's CPU a call from ``/proc`` over the same run, so a share reads as us a call.

Usage: python benchmarks/harness/forward_profile.py [--seconds 12] [--connections 16] [--rate 250]
       [--top 25]
(needs ``py-spy`` and ``wrk``)
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
from tests.conftest import free_port, stop_process  # noqa: E402
from upstream_gap import threads  # noqa: E402

# (stage, substrings of a frame "function (file)"); from the leaf up, the first frame naming one wins
STAGES: list[tuple[str, tuple[str, ...]]] = [
    ("socket send (asyncio's write)", ("write (asyncio/selector_events", "_write_ready (asyncio/selector_")),
    ("socket read (asyncio's read)", ("_read_ready", "data_received (asyncio")),
    ("answer checks (shape, plain result, result check, shown, own results)",
     ("result_shape", "plain_upstream_result", "result_check", "shown_result", "own_results", "surrogate")),
    ("forward: HttpPool and its connection (request, send, head, body)", ("lean_http",)),
    ("forward: the upstream client (request build, parse, validate)",
     ("lean_upstream", "upstream_calls", "step_deadline", "gateway/upstream.py")),
    ("audit rows (build, chain, SQLite, group commit)",
     ("gateway/audit", "call_record", "sentinel_mcp/storage/", "json_text", "random_pool", "metrics")),
    ("guard (Python side)", ("sentinel_mcp/policy", "decide_step", "sentinel_mcp/guard")),
    ("route/validate", ("catalog_view", "argument_shape", "judged_arguments", "_validate", "conversations")),
    ("HTTP front (uvicorn, our protocol, lean calls, wire checks, identity)",
     ("uvicorn/", "app/http_protocol", "app/http_app", "app/lean_calls", "wire_guard", "wire_limits",
      "identity/", "mcp/shared/inbound", "request_state")),
    ("gateway kernel (front, core, unspanned kernel)", ("sentinel_mcp/gateway/",)),
    ("pydantic / mcp models", ("pydantic", "mcp/types")),
]


def stage_of(stack: str) -> str:
    for frame in reversed(stack.split(";")):
        for name, keys in STAGES:
            if any(k in frame for k in keys):
                return name
    return "event loop, selector, other"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=12.0)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--rate", type=int, default=250)
    ap.add_argument("--top", type=int, default=0, help="also the N frames most often at the top (self)")
    args = ap.parse_args()
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-fwdprof-"))
    port = free_port()
    direct = f"http://127.0.0.1:{port}/mcp"
    up = pc.start([pc.PY, pc.TOOLBOX, "--http", str(port)], direct)
    proc = None
    try:
        proc, url = pc.sentinel(tmp, {"tb": {"url": direct, "protocol": "modern"}}, [], "fwd")
        body, headers = call_body("tb__noop"), call_headers("tb__noop")
        check_call(url, "tb__noop")
        wrk(url, body, headers, connections=args.connections, seconds=2, server_pid=proc.pid)  # warm up
        out = tmp / "stacks.txt"
        record = [spy, "record", "-r", str(args.rate), "-d", str(int(args.seconds)), "-f", "raw", "--threads",
                  "--nonblocking", "-o", str(out), "--pid", str(proc.pid)]
        result: list = []
        before = threads(proc.pid)
        load = threading.Thread(target=lambda: result.append(
            wrk(url, body, headers, connections=args.connections, seconds=args.seconds + 1,
                server_pid=proc.pid)))
        load.start()
        subprocess.run(record, check=True, capture_output=True)
        load.join()
        after = threads(proc.pid)
    finally:
        if proc is not None:
            stop_process(proc)
        stop_process(up)
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
    r = result[0]
    loop_ms = 1000 * (after["loop"][0] + after["loop"][1] - before["loop"][0] - before["loop"][1]) / max(
        r.requests, 1)
    print(f"{pc.fmt(r)}; the loop's CPU a call {loop_ms:.3f} ms; {total} samples of the loop thread")
    print("| stage | share of the loop's CPU samples | us a call |\n|---|---|---|")
    for name, n in shares.most_common():
        print(f"| {name} | {100 * n / total:.1f} % | {1000 * loop_ms * n / total:.0f} |")
    if args.top:
        leaf: collections.Counter[str] = collections.Counter()
        for stack, n in by_thread[loop]:
            leaf[stack.split(";")[-1]] += n
        print("| frame at the top | share |\n|---|---|")
        for frame, n in leaf.most_common(args.top):
            print(f"| {frame[:110]} | {100 * n / total:.1f} % |")


if __name__ == "__main__":
    main()
