"""What asyncio objects one sequential stdio call makes in the gateway, and where (issue 21): tasks,
futures, timers (``call_at``/``call_later``: each ``asyncio.timeout`` with a deadline, each ``wait_for``),
``call_soon`` callbacks, and ``asyncio.Timeout`` objects. Each costs the loop CPU (a task a step and a context
copy, a timer a heap push and pop); a count per call shows which are pure overhead. Counts, not times: a busy
machine does not move them.

The gateway runs under this file (``--serve``), the loop's methods wrapped to count the calling site (the
first frame outside asyncio and anyio); ``loop_turns.measure`` drives it (a raw client, the test toolbox's
no-op over stdio, either era) and the counts are divided by the calls made (the warm-up included).

Usage: python benchmarks/harness/loop_objects.py [--calls 500] [--era modern|legacy] [--top 8]
"""

from __future__ import annotations

import argparse
import collections
import json
import signal
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]
import loop_turns  # noqa: E402

SKIP = ("/asyncio/", "/anyio/", "loop_objects.py", "/contextlib.py", "/threading.py")


def serve(out: str, argv: list[str]) -> None:
    import asyncio
    import asyncio.base_events as base_events
    import asyncio.timeouts as timeouts
    import atexit
    import runpy

    counts: collections.Counter[str] = collections.Counter()

    def site() -> str:
        frame = sys._getframe(2)
        while frame is not None and any(s in frame.f_code.co_filename for s in SKIP):
            frame = frame.f_back  # type: ignore[assignment]
        if frame is None:
            return "?"
        name = frame.f_code.co_filename.split("/site-packages/")[-1].split("/sentinel_mcp/")[-1]
        return f"{name}:{frame.f_lineno} {frame.f_code.co_name}"

    def wrap(cls: type, method: str, kind: str) -> None:
        original = getattr(cls, method)

        def counted(self: object, *args: object, **kwargs: object) -> object:
            counts[f"{kind}\t{site()}"] += 1
            return original(self, *args, **kwargs)

        setattr(cls, method, counted)

    loop_cls = base_events.BaseEventLoop
    wrap(loop_cls, "create_task", "task")
    wrap(loop_cls, "create_future", "future")
    wrap(loop_cls, "call_at", "timer")
    wrap(loop_cls, "call_soon", "call_soon")
    wrap(loop_cls, "call_soon_threadsafe", "call_soon_threadsafe")
    wrap(timeouts.Timeout, "__init__", "asyncio.Timeout")
    assert asyncio.Task  # the C task: its steps are not counted here (loop_turns.py counts them)

    def dump(*_: object) -> None:
        Path(out).write_text(json.dumps(counts))

    atexit.register(dump)
    signal.signal(signal.SIGUSR1, dump)
    sys.argv = ["sentinel_mcp", *argv]
    runpy.run_module("sentinel_mcp", run_name="__main__")


def per_call(calls: int, era: str) -> dict[str, dict[str, float]]:
    """Per kind, each site's count per call."""
    counts, made = loop_turns.measure(calls, era, script=__file__)
    out: dict[str, dict[str, float]] = collections.defaultdict(dict)
    for key, n in counts.items():
        kind, where = key.split("\t", 1)
        out[kind][where] = n / made
    return out


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--serve":
        return serve(sys.argv[2], sys.argv[3:])
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--era", choices=("modern", "legacy"), default="modern")
    ap.add_argument("--top", type=int, default=8)
    args = ap.parse_args()
    kinds = per_call(args.calls, args.era)
    print(f"asyncio objects per sequential stdio call ({args.era}, {args.calls} calls after the warm-up)")
    for kind in ("task", "future", "timer", "asyncio.Timeout", "call_soon", "call_soon_threadsafe"):
        sites = kinds.get(kind, {})
        print(f"{kind:22} {sum(sites.values()):6.2f}")
        for where, n in sorted(sites.items(), key=lambda kv: -kv[1])[: args.top]:
            if n >= 0.05:
                print(f"    {n:5.2f}  {where}")


if __name__ == "__main__":
    main()
