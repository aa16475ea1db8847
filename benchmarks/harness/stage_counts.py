"""Python function calls per sequential stdio ``tools/call``, by pipeline stage (issue 21): deterministic
figures a busy machine does not move, for the stage table of the added-latency goal.

The gateway runs under this file (``--serve``): between SIGUSR1 and SIGUSR2 a ``sys.setprofile`` hook counts
every Python and C function call on the event loop's thread and gives it to the innermost pipeline stage on
its frame chain (a coroutine resumed by the loop has its awaiting coroutines as its frame chain, so a step
resumed after an ``await`` is still counted in its stage); a call in no stage is the loop's own (``loop``).
The client is ``work_counts.py``'s stdio driver (a JSON-lines writer, 200 warm-up calls, the toolbox's no-op
over stdio, the data directory on tmpfs). Stages nest; each count is the calls not in an inner stage.
``--echo``: the toolbox's echo with a 64-character text instead, guarded by a one-rule rulebase (its proof in
both audit rows).
``--http``: instead, one 2026-07-28 ``tools/call`` of the in-process no-op built-in on the HTTP front (the
capacity row's call: ``serve_with_noop.py``, the durable audit on), posted by ``work_counts.py``'s HTTP driver
on one kept-alive connection, with the HTTP front's layers as stages of their own (``HTTP_STAGES``).
``--connections 16`` (with ``--http``): the counted calls are posted by wrk on 16 keep-alive connections (the
capacity row's load: rows then go to the audit's writer thread, not the loop). Every count is divided by the
requests the lean path took in the window (calls of ``_lean_request``), whichever the load.
Usage: python benchmarks/harness/stage_counts.py [--base TREE] [--calls 300] [--echo | --http
       [--connections 16 --seconds 6]]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
ROOT = HERE.parent.parent.parent

# (module, qualified name) -> stage, innermost wins; every tree since hp-lean has these names
STAGES = [
    ("sentinel_mcp.gateway.stdio_transport", "StdioTransport", "front: read, parse, take"),
    ("sentinel_mcp.gateway.stdio_lean_calls", "StdioLeanCalls.take", "front: read, parse, take"),
    ("sentinel_mcp.gateway.stdio_lean_calls", "StdioLeanCalls._serve", "front: call task, answer out"),
    ("sentinel_mcp.gateway.unspanned_kernel", "serve_call", "kernel: params, middleware"),
    ("sentinel_mcp.gateway.front", "Front.call_tool", "Front.call_tool (conversation, link)"),
    ("sentinel_mcp.gateway.core", "Gateway.run", "Gateway.run (record, admission)"),
    ("sentinel_mcp.gateway.core", "Gateway._route", "route"),
    ("sentinel_mcp.gateway.core", "Gateway._validate", "validate"),
    ("sentinel_mcp.gateway.decide_step", "DecideStep._ask_guard", "guard"),
    ("sentinel_mcp.gateway.call_record", "CallRecord.decided", "decision row"),
    ("sentinel_mcp.gateway.core", "Gateway._forward", "forward (outside the upstream call)"),
    ("sentinel_mcp.gateway.upstream_rounds", "call_upstream", "upstream call: written, read"),
    ("sentinel_mcp.gateway.observe_step", "ObserveStep._observe", "observe: result checks"),
    ("sentinel_mcp.gateway.call_record", "CallRecord.finished", "answer row"),
    ("sentinel_mcp.gateway.call_record", "CallRecord.stamp", "answer stamped"),
]

CALLS_KEY = "(requests taken by the lean path)"  # in the child's counts: the divisor, not a stage
PY_MARK = "python: "  # in the child's counts: a stage's Python frames (C functions' calls not counted)
# the HTTP front's layers, outermost first (``--http``); inner stages are the gateway's above
HTTP_STAGES = [
    ("sentinel_mcp.app.http_protocol", "FrontHTTPProtocol", "http: socket, parse (FrontHTTPProtocol)"),
    ("uvicorn.protocols.http.httptools_impl", "HttpToolsProtocol", "http: socket, parse (FrontHTTPProtocol)"),
    ("uvicorn.protocols.http.httptools_impl", "RequestResponseCycle", "http: ASGI cycle (uvicorn)"),
    ("sentinel_mcp.app.startup_failure", "StartupFailure", "http: ASGI layers (outer)"),
    ("sentinel_mcp.app.safe_headers", "SafeHeaders", "http: ASGI layers (outer)"),
    ("starlette.applications", "Starlette", "http: ASGI layers (outer)"),
    ("starlette.middleware.errors", "ServerErrorMiddleware", "http: ASGI layers (outer)"),
    ("sentinel_mcp.app.app_boundary", "AppBoundary", "http: ASGI layers (outer)"),
    ("sentinel_mcp.app.http_app", "CallerGuard", "http: CallerGuard"),
    ("sentinel_mcp.gateway.wire_guard", "WireGuard", "http: WireGuard"),
    ("sentinel_mcp.app.lean_calls", "LeanCalls", "http: LeanCalls"),
    ("sentinel_mcp.app.lean_calls", "_respond", "http: answer written"),
]
_STAGE_TABLE = HTTP_STAGES + STAGES if os.environ.get("STAGE_COUNTS_HTTP") else STAGES


def serve_counted(argv: list[str]) -> None:
    """In the gateway's process: the stage counter on the loop's thread between the signals, its counts
    written (JSON) to $WORK_COUNTS_OUT at SIGUSR2; then the tree's own launcher."""
    import importlib
    import runpy
    import threading

    codes: dict[Any, str] = {}

    def _resolve() -> None:
        for module, qual, stage in _STAGE_TABLE:
            target: Any = importlib.import_module(module)
            for part in qual.split("."):
                target = getattr(target, part, None)
                if target is None:
                    break
            if isinstance(target, type):  # a class: every function defined in it
                for value in vars(target).values():
                    code = getattr(getattr(value, "__wrapped__", value), "__code__", None)
                    if code is not None:
                        codes[code] = stage
            elif target is not None:
                target = getattr(target, "__wrapped__", target)  # under ``traced``
                codes[target.__code__] = stage

    counts: Counter[str] = Counter()
    detail = bool(os.environ.get("STAGE_COUNTS_DETAIL"))  # each stage's calls by the function called

    entered: list[Any] = []  # the code whose every call is one request taken by the lean path (the divisor)

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event != "call" and event != "c_call":
            return
        if entered and frame.f_code is entered[0] and event == "call":
            counts[CALLS_KEY] += 1
        f, stage = frame, None
        while f is not None:
            stage = codes.get(f.f_code)
            if stage is not None:
                break
            f = f.f_back
        if stage is None:
            stage = "loop (asyncio, not in a stage)"
            if detail:  # the innermost frame outside the standard library: whose task or callback
                f = frame
                while f is not None and "/lib/python3" in f.f_code.co_filename:
                    f = f.f_back
                if f is not None:
                    stage = f"loop: {f.f_code.co_filename.rsplit('/', 1)[-1]}:{f.f_code.co_qualname}"
        if detail:
            called = (getattr(arg, "__qualname__", repr(arg)) if event == "c_call"
                      else f"{frame.f_code.co_filename.rsplit('/', 2)[-1]}:{frame.f_code.co_qualname}")
            stage = f"{stage} | {called}"
        counts[stage] += 1
        if event == "call":  # a Python function's frame (or a coroutine's resumption), not a C function
            counts[PY_MARK + stage] += 1

    loop_thread = threading.get_ident()

    def start(*_: Any) -> None:
        if threading.get_ident() == loop_thread:
            _resolve()
            if os.environ.get("STAGE_COUNTS_HTTP"):  # a plain function: its every call is a request's one
                entered.append(importlib.import_module("sentinel_mcp.app.lean_calls")._lean_request.__code__)
            sys.setprofile(hook)

    def stop(*_: Any) -> None:
        sys.setprofile(None)
        Path(os.environ["WORK_COUNTS_OUT"]).write_text(json.dumps(counts))

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    sys.path[:0] = [str(HERE.parent)]
    from work_counts import inline_when_asked

    inline_when_asked()
    target = str(HERE.parent / "serve_with_noop.py")
    sys.argv = [target, *argv]
    runpy.run_path(target, run_name="__main__")


# ``--echo``: a call with an argument, guarded by a rulebase (a proof in both audit rows)
ECHO_RULES = "guard('tb__echo', [text = T], require(\\+ sub_atom(T, _, _, _, forbidden), 'forbidden')).\n"
ECHO_ARGUMENTS = {"text": "please cancel reservation ZFA04Y for mia_li_3668: change of plan"}


def _wrk_window(connections: int, seconds: float, answered: list[int]) -> Any:
    """``work_counts._profile_window`` with the counted calls posted by wrk on ``connections`` keep-alive
    connections for ``seconds`` (the capacity row's load) instead of one by one; the calls wrk saw answered
    are put in ``answered`` (the divisor when the server's own count is missing)."""
    from load import call_body, call_headers, wrk

    def window(proc: Any, out: Path, call: Any, calls: int) -> None:
        for n in range(200):  # warm-up: caches filled, first-use imports done
            call(n + 2)
        url = f"http://{proc.args[-1]}/mcp"  # the launch's last argument: the bound address
        tool = "bench__noop"
        os.kill(proc.pid, signal.SIGUSR1)
        time.sleep(0.3)
        result = wrk(url, call_body(tool), call_headers(tool), connections=connections, seconds=seconds)
        time.sleep(1.0)  # the calls wrk left in flight end (answered to nobody) before the count stops
        os.kill(proc.pid, signal.SIGUSR2)
        if result.errors:
            raise RuntimeError(f"wrk: {result.errors} calls not answered 200")
        answered.append(result.requests)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not out.exists():
            time.sleep(0.1)
        time.sleep(0.5)

    return window


def stage_counts(tree: Path, calls: int, echo: bool = False, http: bool = False,
                 connections: int = 1, seconds: float = 6.0) -> dict[str, float]:
    """Calls per request by stage, for ``tree``'s gateway (its sources first on the path), run by this
    interpreter (both trees alike). ``connections`` > 1 (``http``): the calls are wrk's, over ``seconds``."""
    sys.path[:0] = [str(HERE.parent)]
    import work_counts as wc

    saved = wc.HERE, wc._python, wc._per_call, wc._profile_window
    wc.HERE = HERE  # work_counts' stdio driver, its child this file (the counter) instead of cProfile
    wc._python = lambda t: sys.executable
    answered: list[int] = []

    def per_call(t: Path, out: Path, n: int) -> dict[str, float]:
        # divided by the requests the server took in the window (wrk's last calls, cut off by its end, are
        # counted in part but not answered to it: a few percent of a short run)
        counts = json.loads(out.read_text())
        taken = counts.pop(CALLS_KEY, 0) or (answered[-1] if answered else n)
        return {k: v / taken for k, v in counts.items()}

    wc._per_call = per_call
    if http and connections > 1:
        wc._profile_window = _wrk_window(connections, seconds, answered)
    try:
        if http:
            os.environ["STAGE_COUNTS_HTTP"] = "1"  # read by the child (``_STAGE_TABLE``)
            return wc.call_counts(tree, calls, keep_alive=True)
        if echo:
            return wc.stdio_call_counts(tree, calls, tool="echo", arguments=ECHO_ARGUMENTS, rules=ECHO_RULES)
        return wc.stdio_call_counts(tree, calls)
    finally:
        wc.HERE, wc._python, wc._per_call, wc._profile_window = saved


def main() -> None:
    if sys.argv[1:2] == ["--serve"]:  # the child: the rest is the CLI's (its own ``--http`` among them)
        serve_counted(sys.argv[3:])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", help="the other source tree")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--echo", action="store_true",
                    help="the toolbox's echo with a text argument, guarded by a one-rule rulebase")
    ap.add_argument("--http", action="store_true",
                    help="the HTTP front's 2026-07-28 call of the in-process no-op built-in, by layer")
    ap.add_argument("--connections", type=int, default=1,
                    help="with --http: the counted calls posted by wrk on this many connections (the "
                    "capacity row: 16) for --seconds")
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--inline", action="store_true",
                    help="every row committed on the loop (work_counts.py --inline: a busy machine's slow "
                    "commit no longer moves the sequential calls' rows to the writer midway)")
    ap.add_argument("--serve", help=argparse.SUPPRESS)  # the tree (work_counts' child arguments)
    args = ap.parse_args()
    if args.inline:
        os.environ["WORK_COUNTS_INLINE"] = "1"  # read by each tree's gateway (``inline_when_asked``)
    trees = {"this tree": ROOT}
    if args.base:
        trees = {"base": Path(args.base).resolve(), **trees}
    rows = {name: stage_counts(tree, args.calls, args.echo, args.http, args.connections, args.seconds)
            for name, tree in trees.items()}
    table = HTTP_STAGES + STAGES if args.http else STAGES
    py = {n: {k[len(PY_MARK):]: r.pop(k) for k in list(r) if k.startswith(PY_MARK)} for n, r in rows.items()}
    stages = list(dict.fromkeys([s for _, _, s in table] + [k for r in rows.values() for k in r]))
    head = f"stage (function calls per {'HTTP' if args.http else 'stdio'} tools/call, 2026-07-28)"
    # each tree: all calls, and of them Python functions' frames (a C function's call costs far less)
    print(f"{head:52s} " + " ".join(f"{n + ' (all / Python)':>24s}" for n in rows))
    for stage in stages:
        print(f"{stage:52s} "
              + " ".join(f"{rows[n].get(stage, 0.0):12.1f}{py[n].get(stage, 0.0):12.1f}" for n in rows))
    print(f"{'total':52s} "
          + " ".join(f"{sum(rows[n].values()):12.1f}{sum(py[n].values()):12.1f}" for n in rows))
    # the loop's own share moves with the machine's load (turns that find nothing, commits moved to the
    # writer): compare trees on the rest
    print(f"{'total outside the loop':52s} " + " ".join(
        f"{sum(v for k, v in rows[n].items() if not k.startswith('loop')):12.1f}"
        f"{sum(v for k, v in py[n].items() if not k.startswith('loop')):12.1f}" for n in rows))


if __name__ == "__main__":
    main()
