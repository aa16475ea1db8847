"""The added latency of one sequential no-op call, two source trees interleaved in one run (a busy shared
machine moves every latency, so only calls taken side by side compare): the real ``mcp`` client speaks to each
tree's ``sentinel-mcp serve`` over stdio (``--transport stdio``) or streamable HTTP (``--transport http``),
which forwards to the test toolbox; the toolbox is also called directly over the same transport. Blocks of
calls alternate between direct, the base tree and this tree; per era it prints the p50 of each, the added p50
(Sentinel - direct) and the gateway process's CPU per call.

Which upstream the gateways forward to (``--upstream``): ``stdio``, a toolbox process of their own (the
stdio row's shape; over HTTP, the shape ``proxy_overhead.py`` measured before 2026-12-04), or ``http``: the
very toolbox HTTP server the direct side calls, in the era the client speaks (``"protocol": "modern"`` for
2026-07-28, ``"legacy"`` for 2025-11-25). Only ``--transport http --upstream http`` has the same server
behind both sides of the HTTP row: over stdio the SDK's stdio server hands each message to a reader and a
writer thread (~14 voluntary context switches a call against ~3 over HTTP), which a stdio upstream adds to
Sentinel's side of the HTTP row alone. The default upstream is the transport's own.

Usage: python benchmarks/harness/latency_ab.py --base /work/main [--transport stdio|http]
       [--upstream stdio|http] [--calls 300] [--block 25] [--eras 2026-07-28,2025-11-25]
       [--base-env NAME=VALUE ...] [--this-env NAME=VALUE ...] [--token-file]
``--base-env`` / ``--this-env``: set in that side's gateway environment only; a ``PYTHONPATH=DIR`` is added
after the tree (``uvloop_site/sitecustomize.py``: one tree, two event loops).
(``TMPDIR=/dev/shm``: the gateways' audit fsyncs on tmpfs, out of the figure.) ``--token-file``: the owner's
token in its file, as ``serve`` makes it, not in the config (a credential that may lapse: rechecked a call).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(HERE)]
from load import TOKEN, proc_cpu  # noqa: E402
from tests.conftest import free_port, stop_process, wait_http  # noqa: E402

TOOLBOX = str(ROOT / "tests" / "gateway" / "toolbox_server.py")
# the client's mode, and the gateways' upstream protocol over HTTP
ERAS = {"2026-07-28": ("auto", "modern"), "2025-11-25": ("legacy", "legacy")}


def _children() -> set[int]:
    me = str(os.getpid())
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me:
                out.add(int(entry))
    return out


def _switches(pid: int) -> tuple[int, int]:
    """Voluntary context switches of ``pid``'s main thread (the event loop) and of all its other threads
    together (the audit writer's hand-offs show there)."""
    main = others = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = (task / "status").read_text()
        except OSError:
            continue
        n = int(status.split("voluntary_ctxt_switches:")[1].split()[0])
        if task.name == str(pid):
            main += n
        else:
            others += n
    return main, others


def _python(tree: Path) -> str:
    python = tree / ".venv" / "bin" / "python"
    return str(python if python.exists() else sys.executable)


EXTRA_ENV: dict[str, dict[str, str]] = {"base": {}, "this tree": {}}  # --base-env / --this-env


def _env(tree: Path, side: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONWARNINGS": "ignore", **EXTRA_ENV[side]}
    env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [EXTRA_ENV[side].get("PYTHONPATH")])])
    return env


OWNER_TOKEN_FILE: list[bool] = [False]  # --token-file
TOKEN_FILE_NOTE = "; the owner's token from its file"


def _config(tmp: Path, name: str, upstream: dict[str, Any]) -> Path:
    cfg = tmp / f"{name}.json"
    http: dict[str, Any] = {"token": TOKEN}
    if OWNER_TOKEN_FILE[0]:  # the default: the owner's token followed from its file (may lapse: rechecked)
        http = {}
        data = tmp / name
        data.mkdir(mode=0o700, exist_ok=True)
        (data / "http-token").write_text(TOKEN + "\n")  # owner_token.TOKEN_FILE, as `config token` makes it
        (data / "http-token").chmod(0o600)
    cfg.write_text(json.dumps({"mcpServers": {"tb": upstream}, "sentinel": {
        "data_dir": str(tmp / name), "builtins": [], "http": http}}))
    cfg.chmod(0o600)
    return cfg


def gateway(tree: Path, tmp: Path, name: str, upstream: dict[str, Any],
            side: str = "this tree") -> StdioServerParameters:
    cfg = _config(tmp, name, upstream)
    return StdioServerParameters(command=_python(tree), args=["-m", "sentinel_mcp", "-c", str(cfg), "serve"],
                                 env=_env(tree, side), cwd=str(tree))


def http_gateway(tree: Path, tmp: Path, name: str, upstream: dict[str, Any],
                 side: str = "this tree") -> tuple[subprocess.Popen[Any], str]:
    cfg, port = _config(tmp, name, upstream), free_port()
    proc = subprocess.Popen([_python(tree), "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http",
                             f"127.0.0.1:{port}"], env=_env(tree, side), cwd=tree, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=90)
    return proc, f"http://127.0.0.1:{port}/mcp"


def http_target(url: str):  # noqa: ANN201
    # Sentinel's HTTP front wants a token; the toolbox ignores it (both sides send the same headers)
    return streamable_http_client(url, http_client=httpx2.AsyncClient(
        timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}))


async def run(base: Path, calls: int, block: int, era: str, transport: str, upstream: str,
              toolbox_url: str | None) -> dict[str, Any]:
    mode, protocol = ERAS[era]
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-lat-"))
    behind = ({"url": toolbox_url, "protocol": protocol} if upstream == "http"
              else {"command": sys.executable, "args": [TOOLBOX]})
    trees = {"base": base, "this tree": ROOT}
    procs: list[subprocess.Popen[Any]] = []
    targets: dict[str, Any] = {}
    pids: dict[str, int | None] = {}
    if transport == "http":
        assert toolbox_url is not None
        targets["direct"] = lambda: http_target(toolbox_url)
        pids["direct"] = None  # the toolbox serves the gateways too when they forward over HTTP
        for name, tree in trees.items():
            proc, url = http_gateway(tree, tmp, name.replace(" ", "-"), behind, name)
            procs.append(proc)
            targets[name], pids[name] = (lambda u=url: http_target(u)), proc.pid
    else:
        targets["direct"] = StdioServerParameters(command=sys.executable, args=[TOOLBOX])
        for name, tree in trees.items():
            targets[name] = gateway(tree, tmp, name.replace(" ", "-"), behind, name)
    times: dict[str, list[float]] = {name: [] for name in targets}
    cpu: dict[str, float] = {}
    switches: dict[str, tuple[float, float]] = {}
    try:
        async with AsyncExitStack() as stack:
            clients = {}
            for name, target in targets.items():
                before = _children()
                made = target() if callable(target) else target
                clients[name] = await stack.enter_async_context(Client(made, mode=mode))  # type: ignore[arg-type]
                if transport == "stdio":
                    pids[name] = next(iter(_children() - before), None)
                tool = "noop" if name == "direct" else "tb__noop"
                for _ in range(20):  # warm up; a refusal is quicker than a call, and no figure
                    result = await clients[name].call_tool(tool, {})
                    assert not result.is_error, (name, result)
            for name, pid in pids.items():  # a loop asked for (uvloop_site/sitecustomize.py) is the loop run
                if pid and EXTRA_ENV.get(name, {}).get("BENCH_LOOP"):
                    assert EXTRA_ENV[name]["BENCH_LOOP"] in Path(f"/proc/{pid}/maps").read_text(), name
            start = {name: proc_cpu(pid) if pid else 0.0 for name, pid in pids.items()}
            sw0 = {name: _switches(pid) for name, pid in pids.items() if pid}
            done = 0
            while done < calls:
                for name, client in clients.items():
                    tool = "noop" if name == "direct" else "tb__noop"
                    for _ in range(block):
                        t0 = time.perf_counter()
                        await client.call_tool(tool, {})
                        times[name].append((time.perf_counter() - t0) * 1000)
                done += block
            for name, pid in pids.items():
                cpu[name] = (proc_cpu(pid) - start[name]) * 1000 / done if pid else float("nan")
                if pid:
                    now = _switches(pid)
                    switches[name] = ((now[0] - sw0[name][0]) / done, (now[1] - sw0[name][1]) / done)
    finally:
        for proc in procs:
            stop_process(proc)
    return {"p50": {n: statistics.median(t) for n, t in times.items()},
            "p90": {n: statistics.quantiles(t, n=10)[-1] for n, t in times.items()}, "cpu": cpu,
            "switches": switches}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    ap.add_argument("--upstream", choices=["stdio", "http"],
                    help="the gateways' upstream (default: --transport)")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--block", type=int, default=25)
    ap.add_argument("--eras", default=",".join(ERAS))
    ap.add_argument("--base-env", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--this-env", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--token-file", action="store_true",
                    help="HTTP: the owner's token kept in its file (the default config; a credential that "
                    "may lapse, each call's caller checked again: caller_recheck.py, stream_recheck.py)")
    args = ap.parse_args()
    OWNER_TOKEN_FILE[0] = args.token_file
    EXTRA_ENV["base"].update(kv.split("=", 1) for kv in args.base_env)
    EXTRA_ENV["this tree"].update(kv.split("=", 1) for kv in args.this_env)
    upstream = args.upstream or args.transport
    load = os.getloadavg()[0]
    toolbox: subprocess.Popen[Any] | None = None
    url = None
    if args.transport == "http" or upstream == "http":
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        toolbox = subprocess.Popen([sys.executable, TOOLBOX, "--http", str(port)], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    rows = []
    try:
        if toolbox is not None:
            wait_http(url, proc=toolbox)  # type: ignore[arg-type]
        for era in args.eras.split(","):
            rows.append((era, anyio.run(run, Path(args.base).resolve(), args.calls, args.block, era,
                                        args.transport, upstream, url)))
    finally:
        if toolbox is not None:
            stop_process(toolbox)
    print(f"\nSequential no-op over {args.transport} (client -> sentinel {args.transport} -> toolbox "
          f"{upstream}), "
          f"{args.calls} calls each in blocks of {args.block}, interleaved; load average {load:.1f} -> "
          f"{os.getloadavg()[0]:.1f}; base env {args.base_env or '-'}, this env {args.this_env or '-'}"
          f"{TOKEN_FILE_NOTE if args.token_file else ''}\n")
    print(f"{'era':12} {'direct p50':>11} {'base p50':>9} {'added':>7} {'this p50':>9} {'added':>7} "
          f"{'base CPU/call':>14} {'this CPU/call':>14}   goal: added <= 0.5 ms")
    for era, r in rows:
        p, c = r["p50"], r["cpu"]
        print(f"{era:12} {p['direct']:11.2f} {p['base']:9.2f} {p['base'] - p['direct']:+7.2f} "
              f"{p['this tree']:9.2f} {p['this tree'] - p['direct']:+7.2f} {c['base']:14.2f} "
              f"{c['this tree']:14.2f}")
    print(f"\n{'era':12} {'p90 direct':>11} {'base':>7} {'this':>7}   voluntary switches a call, "
          "loop thread / other threads: base, this")
    for era, r in rows:
        q, sw = r["p90"], r["switches"]
        print(f"{era:12} {q['direct']:11.2f} {q['base']:7.2f} {q['this tree']:7.2f}   "
              f"{sw.get('base', (0, 0))[0]:.2f} / {sw.get('base', (0, 0))[1]:.2f}, "
              f"{sw.get('this tree', (0, 0))[0]:.2f} / {sw.get('this tree', (0, 0))[1]:.2f}")


if __name__ == "__main__":
    main()
