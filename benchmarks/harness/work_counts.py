"""Work per call, counted, for two source trees side by side: figures a busy shared machine does not move.

A timing here moves by a third from run to run, so a regression of 10-40 % hides in the noise; a count of
work does not. For each tree, in processes of its own (its sources first on the path):

- SWI-Prolog inferences per decision of the airline cancel guard (every fact present, 100k other facts:
  ``hot_path.py``'s guard), the engine's CPU p50 beside it for reference, and the Python function calls
  (cProfile's count, C functions included) per ``PolicyGuard.decide`` of that guard (the Python side of a
  decision: query arguments, the handoff, the answer read, the decision built);
- Python function calls (cProfile's count, C functions included) per 2026-07-28 ``tools/call`` of the
  in-process no-op built-in on the HTTP front (guard and durable audit on), on the gateway's event-loop
  thread, over ``--calls`` sequential calls after a warm-up; and the functions whose calls per request
  changed most;
- the same count per 2026-07-28 ``tools/call`` over the stdio front of the test toolbox's no-op, a stdio
  upstream (front read, route, validate, guard, two durable audit rows, the forward and its answer, the
  write to the client: the sequential call of the added-latency goal), from a client writing JSON lines;
- the same count per 2026-07-28 ``tools/call`` on the HTTP front forwarded to the test toolbox's no-op over
  streamable HTTP (``"protocol": "modern"``: the real-upstream row's lean forward), one toolbox for both.

The 2026-11-29 hunt that found ``shown_digest/2`` hashing every confirmation again (561 -> 804 inferences per
decision) was these counts.
Usage: python benchmarks/harness/work_counts.py [--base TREE] [--calls 500] [--era 2025-11-25]
       [--upstream-protocol auto]
       [--skip guard,http,stdio,upstream] [--inline] [--keep-alive]
Each tree runs with its own ``.venv`` when it has one (else this interpreter).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
ROOT = HERE.parent.parent.parent


async def guard_counts(decisions: int) -> dict[str, float]:
    """In a child: inferences, engine CPU and Python function calls per decision of this tree's airline cancel
    guard."""
    import cProfile
    import pstats

    import guard_latency as gl
    from answered_guard import answered_cancel_guard

    from sentinel_mcp.policy import engine
    from sentinel_mcp.policy.prolog_text import quote_atom

    with tempfile.TemporaryDirectory() as d:
        async with answered_cancel_guard(gl, Path(d)) as (guard, c):
            for _ in range(20):
                await guard.decide(c)
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(decisions):
                await guard.decide(c)
            prof.disable()
            stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
            # the profiler's own disable() is the one call not a decision's
            python_calls = (sum(v[1] for v in stats.values()) - 1) / decisions
            rb = guard.rulebases.current
            mod = await guard.knowledge.ensure(c.session_id, rb)
            goal = (
                f"sentinel_core:sn_decide_compact({quote_atom(rb.module)}, {quote_atom(mod)}, "
                f"{time.time()!r}, {quote_atom(c.identity)}, "
                f"{quote_atom(engine.call_args_text(c.arguments))}, "
                f"{quote_atom(c.digest)}, {quote_atom(rb.version)}, "
                f"{rb.info.inference_limit(guard.inference_limit)}, _)"
            )
            q = (
                f"findall(I-T, (between(1, {decisions}, _), statistics(inferences, I0), "
                f"statistics(cputime, T0), {goal}, statistics(cputime, T1), statistics(inferences, I1), "
                f"I is I1 - I0, T is (T1 - T0) * 1000000), Out)"
            )
            rows = await guard.engine.run(lambda p: list(p.query(q, maxresult=1)))
            await guard.engine.goal("sentinel_core:sn_drop_kept_proofs")
    pairs = [re.match(r"-\((\d+), ([-\d.e+]+)\)", str(x)) for x in rows[0]["Out"]]
    inferences = sorted(int(m.group(1)) for m in pairs if m)
    cpu = sorted(float(m.group(2)) for m in pairs if m)
    return {"inferences": inferences[len(inferences) // 2], "engine_cpu_us": cpu[len(cpu) // 2],
            "python_calls": python_calls}


def inline_when_asked() -> None:
    """In the gateway's process, ``--inline`` (``WORK_COUNTS_INLINE``): a slow commit (a busy machine)
    does not move the rows' commits to the writer midway; sequential calls then commit both rows on the loop
    in every tree, and their counts compare."""
    if not os.environ.get("WORK_COUNTS_INLINE"):
        return
    import sentinel_mcp.storage.sqlite as sqlite_store

    sqlite_store.INLINE_SLOW_S = float("inf")  # trees before perf-inline
    try:
        from sentinel_mcp.storage import inline_policy
    except ImportError:
        pass
    else:
        inline_policy.SLOW_S = inline_policy.STALL_S = float("inf")


def serve_profiled(tree: str, argv: list[str]) -> None:
    """In the gateway's process: cProfile of the event-loop thread between SIGUSR1 and SIGUSR2 (the file
    named by WORK_COUNTS_OUT), then the tree's own capacity launcher."""
    import cProfile
    import runpy

    inline_when_asked()
    prof = cProfile.Profile()
    signal.signal(signal.SIGUSR1, lambda *_: prof.enable())

    def dump(*_: Any) -> None:
        prof.disable()
        prof.dump_stats(os.environ["WORK_COUNTS_OUT"])

    signal.signal(signal.SIGUSR2, dump)
    target = str(Path(tree) / "benchmarks" / "harness" / "serve_with_noop.py")
    sys.argv = [target, *argv]
    runpy.run_path(target, run_name="__main__")


def _python(tree: Path) -> str:
    own = tree / ".venv" / "bin" / "python"
    return str(own) if own.exists() else sys.executable


def _profile_window(proc: subprocess.Popen[Any], out: Path, call: Callable[[int], None], calls: int) -> None:
    """200 warm-up calls (caches filled, first-use imports done), then ``calls`` calls between the signals
    that start and stop the child's profile, and wait for its dump to be written."""
    for n in range(200):
        call(n + 2)
    os.kill(proc.pid, signal.SIGUSR1)
    time.sleep(0.3)
    for n in range(calls):
        call(n + 1000)
    os.kill(proc.pid, signal.SIGUSR2)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not out.exists():
        time.sleep(0.1)
    time.sleep(0.5)  # the dump finishing


def call_counts(tree: Path, calls: int, era: str = "2026-07-28",
                upstream: str | None = None, protocol: str = "modern",
                keep_alive: bool = False) -> dict[str, float]:
    """Function calls per request on the gateway's event-loop thread: {function: calls per request}. ``era``
    2025-11-25: the calls are posted on one handshake-era session (opened first). ``upstream``: instead of the
    in-process no-op, the test toolbox's ``noop`` over streamable HTTP at that URL, configured with
    ``"protocol": protocol`` (``modern``: the real-upstream row's forward; ``auto``: the default).
    ``keep_alive``: every call on one kept-alive connection, as the latency rows' SDK client and wrk post;
    else (the figures of earlier sessions) a new connection a call, whose accept, set-up and close (~400-490
    Python calls) are then counted in every call."""
    # here, not at the top: a child of another tree must not get this tree's sources first on its path
    sys.path[:0] = [str(ROOT), str(HERE.parent)]
    from load import MODERN, TOKEN, call_body, call_headers, handshake, numbered, post
    from tests.conftest import free_port, stop_process, wait_http

    tmp = Path(tempfile.mkdtemp(prefix="work-counts-"))
    cfg = tmp / "c.json"
    servers = {"tb": {"url": upstream, "protocol": protocol}} if upstream else {}
    tool = "tb__noop" if upstream else "bench__noop"
    cfg.write_text(json.dumps({"mcpServers": servers, "sentinel": {
        "data_dir": str(tmp / "data"), "builtins": [] if upstream else ["bench"],
        "rulebases": [str(tree / "rulebases" / "default.pl")], "http": {"token": TOKEN}}}))
    out, port = tmp / "main.prof", free_port()
    env = _profiled(tree, out)
    proc = subprocess.Popen(
        [_python(tree), str(HERE), "--serve", str(tree), "-c", str(cfg), "serve", "--http",
         f"127.0.0.1:{port}"],
        env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=90)
        url = f"http://127.0.0.1:{port}/mcp"
        sid = handshake(url, TOKEN) if era != MODERN else None
        body, headers = call_body(tool, era), call_headers(tool, era, sid)

        kept = http.client.HTTPConnection("127.0.0.1", port, timeout=10) if keep_alive else None

        def call(n: int) -> None:
            # each request its own id (a session refuses or serializes ids in flight; none are here)
            if kept is not None:
                kept.request("POST", "/mcp", numbered(body, n).encode(), headers)
                answer = kept.getresponse()
                status, text = answer.status, answer.read().decode()
            else:
                status, _, text = post(url, numbered(body, n), headers)
            if status != 200 or '"isError":true' in text.replace(" ", ""):
                raise RuntimeError(f"{tree}: the no-op call failed: {status} {text[:300]}")

        _profile_window(proc, out, call, calls)
        if kept is not None:
            kept.close()
    finally:
        stop_process(proc)
    return _per_call(tree, out, calls)


def _profiled(tree: Path, out: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "benchmarks" / "harness")]),
            "WORK_COUNTS_OUT": str(out), "PYTHONWARNINGS": "ignore"}


def _per_call(tree: Path, out: Path, calls: int) -> dict[str, float]:
    import pstats

    counts: dict[str, float] = {}
    for (file, _, name), (_, ncalls, *_rest) in pstats.Stats(str(out)).stats.items():  # type: ignore[attr-defined]
        where = re.sub(r".*site-packages/", "", file.replace(str(tree) + "/", ""))
        key = re.sub(r" at 0x[0-9a-f]+", "", f"{where}:{name}")  # one builtin's address differs by process
        counts[key] = counts.get(key, 0.0) + ncalls / calls
    return counts


def stdio_call_counts(tree: Path, calls: int, era: str = "2026-07-28", tool: str = "noop",
                      arguments: dict[str, Any] | None = None, rules: str | None = None) -> dict[str, float]:
    """Function calls per ``tools/call`` on the stdio front's event-loop thread, forwarded to the test
    toolbox's no-op over stdio: {function: calls per request}. ``era`` 2025-11-25: the client's handshake
    first, then calls without an envelope. ``tool``, ``arguments``: another of the toolbox's tools;
    ``rules``: a rulebase's text, the guard (else the default guard)."""
    # the data directory on tmpfs where there is one: slow commits on a busy disk turn inline commits off for
    # a while (``storage/inline_policy.py``), which moves the count by ~100 midway through a run
    shm = Path("/dev/shm")
    tmp = Path(tempfile.mkdtemp(prefix="work-counts-stdio-", dir=shm if shm.is_dir() else None))
    cfg = tmp / "c.json"
    toolbox = str(ROOT / "tests" / "gateway" / "toolbox_server.py")
    rulebases = []
    if rules is not None:
        (tmp / "rules.pl").write_text(rules)
        rulebases = [str(tmp / "rules.pl")]
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [toolbox]}},
                               "sentinel": {"data_dir": str(tmp / "data"), "builtins": [],
                                            "rulebases": rulebases}}))
    out = tmp / "main.prof"
    proc = subprocess.Popen([_python(tree), str(HERE), "--serve", str(tree), "-c", str(cfg), "serve"],
                            env=_profiled(tree, out), cwd=tree, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "work-counts", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    assert proc.stdin and proc.stdout
    params: dict[str, Any] = {"name": f"tb__{tool}", "arguments": arguments or {}, "_meta": meta}
    if era != "2026-07-28":
        params = {"name": f"tb__{tool}", "arguments": arguments or {}}
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": era, "capabilities": {},
                            "clientInfo": {"name": "work-counts", "version": "1"}}}
        proc.stdin.write(json.dumps(hello).encode() + b"\n")
        proc.stdin.flush()
        if b'"id":1' not in proc.stdout.readline():
            raise RuntimeError(f"{tree}: the stdio handshake failed")
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        proc.stdin.flush()

    def call(n: int) -> None:
        line = json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
        proc.stdin.write(line.encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        answer = proc.stdout.readline()  # type: ignore[union-attr]
        if f'"id":{n},'.encode() not in answer or b'"isError":true' in answer:
            raise RuntimeError(f"{tree}: the stdio no-op call failed: {answer[:300]!r}")

    try:
        _profile_window(proc, out, call, calls)
    finally:
        proc.stdin.close()  # the gateway ends at the end of its input, and its upstream with it
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    return _per_call(tree, out, calls)


def _toolbox() -> tuple[subprocess.Popen[Any], str]:
    """The test toolbox over streamable HTTP (the ``upstream`` row's real upstream), shared by the trees."""
    sys.path[:0] = [str(ROOT), str(HERE.parent)]
    from tests.conftest import free_port, wait_http

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "gateway" / "toolbox_server.py"), "--http",
                             str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    wait_http(url, proc=proc, timeout=60)
    return proc, url


def _changed(a: dict[str, float], b: dict[str, float], title: str, top: int) -> None:
    changed = sorted(((b.get(k, 0.0) - a.get(k, 0.0), k) for k in set(a) | set(b)), key=lambda r: -abs(r[0]))
    print(f"\n{title}: functions whose calls per request changed most (base -> this tree, top {top}):")
    for delta, key in changed[:top]:
        if abs(delta) < 0.5:
            break
        print(f"  {delta:+7.1f}  {a.get(key, 0.0):7.1f} -> {b.get(key, 0.0):7.1f}  {key[:110]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", help="the other source tree (e.g. an older commit's worktree)")
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--decisions", type=int, default=200)
    ap.add_argument("--top", type=int, default=15, help="functions whose calls per request changed most")
    ap.add_argument("--era", choices=["2026-07-28", "2025-11-25"], default="2026-07-28",
                    help="the HTTP calls' protocol era (2025-11-25: on one session)")
    ap.add_argument("--stdio-era", choices=["2026-07-28", "2025-11-25"], default="2026-07-28",
                    help="the stdio calls' protocol era (2025-11-25: after the client's handshake)")
    ap.add_argument("--upstream-protocol", choices=["modern", "auto", "legacy"], default="modern",
                    help="the real upstream's configured protocol (auto: the default, handshake first)")
    ap.add_argument("--skip", default="", help="comma-separated rows left out: guard, http, stdio, upstream")
    ap.add_argument("--inline", action="store_true",
                    help="every row committed on the loop (a slow commit on a busy machine no longer "
                    "switches to the writer midway, moving the figure by ~100); TMPDIR on tmpfs helps")
    ap.add_argument("--keep-alive", action="store_true",
                    help="the HTTP rows' calls on one kept-alive connection (as the latency and capacity "
                    "rows post), not a new connection a call")
    ap.add_argument("--child-guard", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--serve", help=argparse.SUPPRESS)
    args, rest = ap.parse_known_args()
    if args.inline:
        os.environ["WORK_COUNTS_INLINE"] = "1"  # read by each tree's gateway (``serve_profiled``)
    if args.serve:
        serve_profiled(args.serve, rest)
        return
    if args.child_guard:
        print(json.dumps(asyncio.run(guard_counts(args.decisions))))
        return
    trees = {"this tree": ROOT}
    if args.base:
        trees = {"base": Path(args.base).resolve(), **trees}
    guard: dict[str, dict[str, float]] = {}
    calls: dict[str, dict[str, float]] = {}
    stdio: dict[str, dict[str, float]] = {}
    upstream: dict[str, dict[str, float]] = {}
    skip = set(args.skip.split(","))
    toolbox, toolbox_url = _toolbox() if "upstream" not in skip else (None, "")
    nan = {"inferences": float("nan"), "engine_cpu_us": float("nan"), "python_calls": float("nan")}
    for name, tree in trees.items():
        guard[name], calls[name], stdio[name], upstream[name] = nan, {}, {}, {}
        if "guard" not in skip:
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "benchmarks")])}
            argv = [_python(tree), str(HERE), "--child-guard", "--decisions", str(args.decisions)]
            p = subprocess.run(argv, env=env, cwd=tree, capture_output=True, text=True, timeout=600)
            lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
            if not lines:
                sys.exit(f"{name}: no guard figures\n{p.stderr[-3000:]}")
            guard[name] = json.loads(lines[-1])
        if "http" not in skip:
            calls[name] = call_counts(tree, args.calls, args.era, keep_alive=args.keep_alive)
        if "stdio" not in skip:
            stdio[name] = stdio_call_counts(tree, args.calls, args.stdio_era)
        if toolbox is not None:
            upstream[name] = call_counts(tree, args.calls, upstream=toolbox_url,
                                         protocol=args.upstream_protocol, keep_alive=args.keep_alive)
        print(f"... {name} measured", file=sys.stderr, flush=True)
    if toolbox is not None:
        from tests.conftest import stop_process

        stop_process(toolbox)
    names = list(trees)
    print(f"\n{'measure':72s} " + " ".join(f"{n:>12s}" for n in names))
    print(f"{'guard: SWI-Prolog inferences per decision (airline cancel, 100k facts)':72s} "
          + " ".join(f"{guard[n]['inferences']:12.0f}" for n in names))
    print(f"{'guard: engine CPU per decision, p50 (us; a timing, for reference)':72s} "
          + " ".join(f"{guard[n]['engine_cpu_us']:12.0f}" for n in names))
    print(f"{'guard: Python function calls per PolicyGuard.decide (the same guard)':72s} "
          + " ".join(f"{guard[n].get('python_calls', float('nan')):12.1f}" for n in names))
    print(f"{f'HTTP tools/call ({args.era}), no-op built-in: Python function calls per call':72s} "
          + " ".join(f"{sum(calls[n].values()):12.0f}" for n in names))
    row = f"stdio tools/call ({args.stdio_era}), no-op of a stdio upstream: Python function calls per call"
    print(f"{row:72s} "
          + " ".join(f"{sum(stdio[n].values()):12.0f}" for n in names))
    real = (f"HTTP tools/call (2026-07-28), a real upstream ({args.upstream_protocol}): "
            "Python function calls per call")
    print(f"{real:72s} "
          + " ".join(f"{sum(upstream[n].values()):12.0f}" for n in names))
    # the totals move by ~100 with where a call's two audit rows were committed: on the loop (4 SQLite
    # ``execute`` a row) when it was idle, else by the writer's thread; compare runs of the same figure here
    execute = "~:<method 'execute' of 'sqlite3.Connection' objects>"
    print(f"{'  SQLite execute on the loop per call, HTTP / stdio (8: both rows inline)':72s} "
          + " ".join(f"{calls[n].get(execute, 0.0):5.1f} /{stdio[n].get(execute, 0.0):5.1f}" for n in names))
    if len(names) == 2:
        _changed(calls[names[0]], calls[names[1]], "HTTP", args.top)
        _changed(stdio[names[0]], stdio[names[1]], "stdio", args.top)
        _changed(upstream[names[0]], upstream[names[1]], "HTTP, real upstream", args.top)


if __name__ == "__main__":
    main()
