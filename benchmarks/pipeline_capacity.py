"""The whole pipeline under load, side by side in one run, each row with its goal (issue 21):

  1. capacity: 16 concurrent HTTP clients (2026-07-28 single-request ``tools/call``) to an in-process no-op
     built-in, policy guard on (default rulebase), durable write-ahead audit on;
  2. a real Python MCP upstream (the test toolbox, MCPServer over streamable HTTP): direct rate against the
  rate
     through Sentinel;
  3. peers, one stdio upstream served over streamable HTTP (handshake era, the only one ``mcp-proxy`` speaks):
     direct | Sentinel | mcp-proxy (if its venv exists: ``make bench`` makes it), latency with one client and
     rate with 16;
  4. cold start of ``serve`` on the embedded default to the first ``tools/list`` answered, and what it spends
     before the first line of the server runs (imports);
  5. memory: the gateway's RSS after 1k calls and after --memory-calls calls (100k by default).

The load generator is ``wrk`` (compiled C, Debian's package; ``make bench`` installs it); its CPU share is
printed beside each rate, and the server's, so a reader can tell which side was the ceiling.
Usage: python benchmarks/pipeline_capacity.py [--seconds S] [--memory-calls N] [--skip memory,peers,...]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT / "benchmarks" / "harness"
# the airline example behind Sentinel: the shipped rulebases, the seeds of its tasks' user, and a cancel the
# guard decides after fetching the reservation (denied: not that user's)
AIRLINE_RULEBASES = ("default.pl", "airline.pl")
AIRLINE_SEEDS = {"current_user": "mia_li_3668", "today": "2024-05-15"}
AIRLINE_CANCEL = ("airline__cancel_reservation", {"reservation_id": "8C8K4E", "reason": "change of plan"})
sys.path[:0] = [str(ROOT), str(HARNESS)]
from load import (  # noqa: E402
    HANDSHAKE,
    MODERN,
    TOKEN,
    LoadResult,
    call_body,
    call_headers,
    check_call,
    handshake,
    have_wrk,
    post,
    proc_cpu,
    rss_mb,
    wrk,
)
from fdatasync_by_bytes import commit_latency  # noqa: E402
from tests.conftest import free_port, stop_process, wait_http  # noqa: E402

PY = sys.executable
TOOLBOX = str(ROOT / "tests" / "gateway" / "toolbox_server.py")
PEER_VENV = Path(os.environ.get("BENCH_PEER_VENV", ROOT / ".venv-bench-peers"))  # mcp-proxy
FORGE_VENV = Path(os.environ.get("BENCH_FORGE_VENV", ROOT / ".venv-bench-forge"))  # mcp-contextforge-gateway
ENV = {**os.environ, "PYTHONWARNINGS": "ignore"}


def start(cmd: list[str], health: str, env: dict | None = None) -> subprocess.Popen:
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env or ENV, start_new_session=True
    )
    try:
        wait_http(health, proc=proc, timeout=60)
    except BaseException:
        stop_process(proc)  # one that never answered is not left running
        raise
    return proc


def sentinel(
    tmp: Path, servers: dict, builtins: list[str], name: str, rulebases: tuple[str, ...] = ("default.pl",),
    seeds: dict | None = None,
) -> tuple[subprocess.Popen, str]:
    cfg = tmp / f"{name}.json"
    cfg.write_text(
        json.dumps(
            {
                "mcpServers": servers,
                "sentinel": {
                    "data_dir": str(tmp / name),
                    "builtins": builtins,
                    "rulebases": [str(ROOT / "rulebases" / n) for n in rulebases],
                    "seeds": seeds or {},
                    "http": {"token": TOKEN},
                },
            }
        )
    )
    port = free_port()
    proc = start(
        [PY, str(HARNESS / "serve_with_noop.py"), "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        f"http://127.0.0.1:{port}/healthz",
    )
    return proc, f"http://127.0.0.1:{port}/mcp"


def load(
    url: str,
    tool: str,
    seconds: float,
    pid: int,
    *,
    era: str = "2026-07-28",
    session: str | None = None,
    token: str | None = TOKEN,
    connections: int = 16,
    arguments: dict | None = None,
) -> LoadResult:
    check_call(url, tool, era, session, token, arguments)
    body, headers = call_body(tool, era, arguments), call_headers(tool, era, session, token)
    wrk(url, body, headers, connections=connections, seconds=1, server_pid=pid)  # warm up
    return wrk(url, body, headers, connections=connections, seconds=seconds, server_pid=pid)


def fmt(r: LoadResult) -> str:
    # CPU per call is the figure a busy shared machine distorts least (a rate also depends on who else runs)
    per_call = 1000 * r.server_cpu / r.rate if r.rate else float("nan")
    return (
        f"{r.rate:7.0f}/s  p50 {r.p50_ms:6.2f}ms  p99 {r.p99_ms:6.2f}ms  server CPU {r.server_cpu:4.2f} "
        f"({per_call:5.2f} ms/call)  client CPU {r.client_cpu:4.2f}  "
        f"loop waited for a CPU {r.main_waited:4.2f}  machine idle {100 * r.machine_idle:3.0f}%"
        + (f"  ERRORS {r.errors}" if r.errors else "")
    )


# ---------------------------------------------------------------------------------------------------- rows
def capacity(tmp: Path, seconds: float, rows: list) -> None:
    proc, url = sentinel(tmp, {}, ["bench"], "capacity")
    try:
        r = load(url, "bench__noop", seconds, proc.pid)
    finally:
        stop_process(proc)
    rows.append(
        (
            "capacity: 16 HTTP clients, in-process no-op built-in, guard + durable audit",
            fmt(r),
            ">= 1500/s",
            r.rate >= 1500,
        )
    )
    # the disk's ceiling on the row: 16 clients hold at most 16 rows in flight, 2 a call, each durable before
    # its call goes on, so a commit carries <= 8 calls: rate <= 8 / T (benchmarks/README.md, hp-capacity)
    p50, p90 = commit_latency(str(tmp))
    rows.append(
        (
            "capacity's disk: a commit (8 WAL frames + fdatasync) p50 / p90; the row's ceiling 8 / T",
            f"{p50:5.2f} / {p90:5.2f} ms: <= {8000 / p50:,.0f}/s at p50, <= {8000 / p90:,.0f}/s at p90",
            "ceiling >= 1500/s",
            8000 / p50 >= 1500,
        )
    )


def real_upstream(tmp: Path, seconds: float, rows: list) -> None:
    """The toolbox over streamable HTTP, direct against through Sentinel (both eras). The direct 2026-07-28
    rate is measured before and after the two Sentinel runs and the ratio taken to their mean (the machine
    drifts over a minute); each row prints the upstream's own CPU per call beside Sentinel's, and the
    neighbours' share (CPU the machine spent on neither process nor wrk): on a shared 2-core machine a
    neighbour takes more from the two processes in line than from the one process of a direct run, so a row
    measured beside one is not the 2-core figure the goal means."""
    port = free_port()
    up = start([PY, TOOLBOX, "--http", str(port)], f"http://127.0.0.1:{port}/mcp")
    direct_url = f"http://127.0.0.1:{port}/mcp"
    try:
        d = upstream_load(direct_url, "noop", seconds, up.pid, None, token=None)
        # the era ``"protocol": "auto"`` speaks to this upstream (the handshake: it may push questions):
        # its own direct rate, on one session as Sentinel holds one; the SDK server's event-stream answer
        # per POST costs the upstream more than a 2026-07-28 call does
        d25 = upstream_load(direct_url, "noop", seconds, up.pid, None, era=HANDSHAKE,
                            session=handshake(direct_url, None), token=None)
        proc, url = sentinel(tmp, {"tb": {"url": direct_url}}, [], "upstream")
        try:
            p = upstream_load(url, "tb__noop", seconds, proc.pid, up.pid)
        finally:
            stop_process(proc)
        # pinned to 2026-07-28: the lean upstream client's path (gateway/lean_upstream.py)
        proc, url = sentinel(tmp, {"tb": {"url": direct_url, "protocol": "modern"}}, [], "upstream-modern")
        try:
            m = upstream_load(url, "tb__noop", seconds, proc.pid, up.pid)
            # 64 clients: whether 16 leave the path short of calls (each waits for its two durable audit
            # rows, so fewer are at the upstream at a time than direct) or the two cores are the limit
            m64 = upstream_load(url, "tb__noop", seconds, proc.pid, up.pid, connections=64)
        finally:
            stop_process(proc)
        d64 = upstream_load(direct_url, "noop", seconds, up.pid, None, token=None, connections=64)
        d2 = upstream_load(direct_url, "noop", seconds, up.pid, None, token=None)
    finally:
        stop_process(up)
    direct = (d[0].rate + d2[0].rate) / 2
    rows.append(("real Python upstream (HTTP), 16 clients: direct, 2026-07-28, before", upstream_fmt(d), "",
                 None))
    rows.append(("  direct, 2026-07-28, after the Sentinel runs", upstream_fmt(d2), "", None))
    rows.append(("  direct, 2025-11-25 (one session)", upstream_fmt(d25), "", None))
    rows.append(
        (
            '  through Sentinel, "protocol": "auto" (speaks 2025-11-25 to it)',
            upstream_fmt(p) + f"  ratio {p[0].rate / max(d25[0].rate, 1e-9):.2f} of its era"
            f" ({p[0].rate / max(direct, 1e-9):.2f} of 2026)",
            ">= 0.9x direct (same era)",
            p[0].rate >= 0.9 * d25[0].rate,
        )
    )
    rows.append(
        (
            '  through Sentinel, "protocol": "modern"',
            upstream_fmt(m) + f"  ratio {m[0].rate / max(direct, 1e-9):.2f} of the mean direct"
            f" (2 idle cores, from CPU per call: {two_cores(m, d, d2):.2f})",
            ">= 0.9x direct",
            m[0].rate >= 0.9 * direct,
        )
    )
    rows.append(("  64 clients: direct, 2026-07-28", upstream_fmt(d64), "", None))
    rows.append(('  64 clients: through Sentinel, "protocol": "modern"',
                 upstream_fmt(m64) + f"  ratio {m64[0].rate / max(d64[0].rate, 1e-9):.2f}", "", None))


def two_cores(through: tuple[LoadResult, float], *direct: tuple[LoadResult, float]) -> float:
    """The ratio the CPU per call of each process says two idle cores would give (the neighbours' share left
    out, not their effect on the CPU per call): direct, the upstream's one event loop on a core of its own
    (1 / u); through Sentinel, both processes and wrk on the two cores, neither past a core (Sentinel's
    whole CPU per call s bounds its loop from below)."""
    r, upstream = through
    if not r.rate or not upstream:
        return float("nan")
    s, u, c = r.server_cpu / r.rate, upstream / r.rate, r.client_cpu / r.rate
    u_direct = statistics.mean(d.server_cpu / d.rate for d, _ in direct if d.rate)
    rate = min(1 / s, 1 / u, 2 / (s + u + c))
    return rate * u_direct


def upstream_load(url: str, tool: str, seconds: float, pid: int, upstream_pid: int | None,
                  connections: int = 16, **kw: Any) -> tuple[LoadResult, float]:
    """``load`` and, through Sentinel, the upstream's CPU (cores) over it: (result, upstream cores)."""
    if upstream_pid is None:
        return load(url, tool, seconds, pid, connections=connections, **kw), 0.0
    check_call(url, tool)
    body, headers = call_body(tool), call_headers(tool)
    wrk(url, body, headers, connections=connections, seconds=1, server_pid=pid)  # warm up
    before, t0 = proc_cpu(upstream_pid), time.perf_counter()
    r = wrk(url, body, headers, connections=connections, seconds=seconds, server_pid=pid)
    return r, (proc_cpu(upstream_pid) - before) / (time.perf_counter() - t0)


def upstream_fmt(run: tuple[LoadResult, float]) -> str:
    r, upstream = run
    busy = (1 - r.machine_idle) * (os.cpu_count() or 1)
    others = max(0.0, busy - r.server_cpu - upstream - r.client_cpu)
    extra = ""
    if upstream and r.rate:
        extra = f"  upstream {upstream:4.2f} ({1000 * upstream / r.rate:4.2f} ms/call)"
    return fmt(r) + extra + f"  neighbours {others:4.2f} core"


def airline_read(tmp: Path, seconds: float, rows: list) -> None:
    """A read tool the airline guard learns from (``get_reservation_details``: ~26 facts a result, into the
    conversation's facts), 16 clients: the airline server's own HTTP against Sentinel in front of it with the
    shipped airline rulebase; 2026-07-28 calls (each its own conversation, as a client that carries no
    session back gets) and 2025-11-25 calls on one session (every result learned again in one conversation).
    """
    port = free_port()
    direct_url = f"http://127.0.0.1:{port}/mcp"
    up = start([PY, "-m", "examples.airline", "--http", str(port)], direct_url,
               env={**ENV, "PYTHONPATH": str(ROOT)})
    args = {"reservation_id": "8C8K4E"}
    try:
        d = load(direct_url, "get_reservation_details", seconds, up.pid, token=None, arguments=args)
        proc, url = sentinel(tmp, {"airline": {"url": direct_url}}, [], "airline-read",
                             rulebases=AIRLINE_RULEBASES, seeds=AIRLINE_SEEDS)
        try:
            p = load(url, "airline__get_reservation_details", seconds, proc.pid, arguments=args)
            p25 = load(url, "airline__get_reservation_details", seconds, proc.pid, era=HANDSHAKE,
                       session=handshake(url), arguments=args)
        finally:
            stop_process(proc)
    finally:
        stop_process(up)
    rows.append(("airline read tool the guard learns from, 16 clients: direct, 2026-07-28", fmt(d), "", None))
    for label, r in (("a conversation per call, 2026-07-28", p), ("one session, 2025-11-25", p25)):
        rows.append((f"  through Sentinel (airline rulebase), {label}",
                     fmt(r) + f"  ratio {r.rate / max(d.rate, 1e-9):.2f}", ">= 0.9x direct",
                     r.rate >= 0.9 * d.rate))


def peers(tmp: Path, seconds: float, rows: list) -> None:
    """A stdio upstream served over HTTP: the upstream itself over HTTP, Sentinel, mcp-proxy."""
    targets: list[tuple[str, subprocess.Popen | None, str, str, str | None]] = []
    try:
        _peer_targets(tmp, rows, targets)
        for label, proc, url, tool, token in targets:
            assert proc is not None
            sid = handshake(url, token)
            one = load(url, tool, seconds, proc.pid, era=HANDSHAKE, session=sid, token=token, connections=1)
            many = load(url, tool, seconds, proc.pid, era=HANDSHAKE, session=sid, token=token)
            rows.append((f"peers, {label}: 1 client", fmt(one), "", None))
            rows.append((f"peers, {label}: 16 clients", fmt(many), "", None))
            if label.startswith("Sentinel"):
                # a client that can be asked (declares elicitation) is asked itself, one that cannot through
                # the console inbox: either way one session's calls to a handshake-era stdio upstream overlap
                # (gateway/party_turns.py)
                asked = handshake(url, token, {"elicitation": {}})
                both = load(url, tool, seconds, proc.pid, era=HANDSHAKE, session=asked, token=token)
                what = f"peers, {label}: 16 clients, a session declaring elicitation"
                rows.append((what, fmt(both), "", None))
    finally:  # every process started is stopped, also when a later one failed to start
        for _, proc, *_ in targets:
            if proc is not None:
                stop_process(proc)


def _peer_targets(tmp: Path, rows: list, targets: list) -> None:
    """Starts each peer, appending it to ``targets`` as soon as it runs."""
    port = free_port()
    up = start([PY, TOOLBOX, "--http", str(port)], f"http://127.0.0.1:{port}/mcp")
    targets.append(("direct (upstream's own HTTP)", up, f"http://127.0.0.1:{port}/mcp", "noop", None))
    gw, url = sentinel(tmp, {"tb": {"command": PY, "args": [TOOLBOX]}}, [], "peers")
    targets.append(("Sentinel (guard, durable audit)", gw, url, "tb__noop", TOKEN))
    proxy_bin = PEER_VENV / "bin" / "mcp-proxy"
    if proxy_bin.exists():
        pport = free_port()
        px = start(
            [str(proxy_bin), "--port", str(pport), "--transport", "streamablehttp", "--", PY, TOOLBOX],
            f"http://127.0.0.1:{pport}/status",
        )
        targets.append(("mcp-proxy (no policy)", px, f"http://127.0.0.1:{pport}/mcp", "noop", None))
    else:
        rows.append(
            ("peer mcp-proxy", f"not measured: {proxy_bin} missing (make bench installs it)", "", None)
        )
    forge_py = FORGE_VENV / "bin" / "python"
    if forge_py.exists():
        # ContextForge's stdio-to-HTTP bridge (its gateway proper needs a database and an admin set-up); it
        # refuses to start without secrets, so the run gets throwaway ones
        fport = free_port()
        forge_env = {
            **ENV,
            **{k: secrets.token_hex(32) for k in ("JWT_SECRET_KEY", "AUTH_ENCRYPTION_SECRET")},
            "PLATFORM_ADMIN_PASSWORD": "Bench-" + secrets.token_hex(8) + "!",
            "BASIC_AUTH_PASSWORD": "Bench-" + secrets.token_hex(8) + "!",
        }
        fx = subprocess.Popen(
            [
                str(forge_py),
                "-m",
                "mcpgateway.translate",
                "--stdio",
                f"{PY} {TOOLBOX}",
                "--expose-streamable-http",
                "--port",
                str(fport),
                "--logLevel",
                "error",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=forge_env,
            cwd=tempfile.gettempdir(),
            start_new_session=True,
        )
        try:
            wait_http(f"http://127.0.0.1:{fport}/healthz", proc=fx, timeout=60)
            targets.append(
                ("ContextForge translate (no policy)", fx, f"http://127.0.0.1:{fport}/mcp", "noop", None)
            )
        except RuntimeError as e:
            stop_process(fx)
            rows.append(("peer ContextForge", f"not measured: {e}", "", None))
    else:
        rows.append(
            (
                "peer ContextForge",
                f"not measured: {forge_py} missing (make bench tries to install it)",
                "",
                None,
            )
        )


def cold_start(tmp: Path, rows: list, runs: int = 3) -> None:
    """``sentinel-mcp serve --http`` with no config (the embedded default) to its first tools/list answer: the
    median (and min) of ``runs`` starts on one data dir, after a first start that makes the owner's token."""
    data = tmp / "cold"
    # as a user's install starts: with its bytecode cache (pip writes it; a shell that sets
    # PYTHONDONTWRITEBYTECODE, as a CI job may, made every start compile every module: ~0.7 s more)
    env = {k: v for k, v in ENV.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"SENTINEL_DATA_DIR": str(data)}
    times: list[float] = []
    for attempt in range(runs + 1):
        answered = _first_tools_list(data, env)
        if attempt and answered is not None:
            times.append(answered)
    imports = subprocess.run(
        [
            PY,
            "-c",
            "import time; t = time.perf_counter(); import sentinel_mcp.app.serve, "
            "sentinel_mcp.app.runtime, sentinel_mcp.cli; print(time.perf_counter() - t)",
        ],
        capture_output=True,
        text=True,
        env={k: v for k, v in env.items() if k != "SENTINEL_DATA_DIR"},
    )
    imported = float(imports.stdout.strip() or "nan")
    if times:
        median = statistics.median(times)
        shown = f"median {median:.2f}s, min {min(times):.2f}s of {len(times)} starts"
    else:
        median, shown = None, "no answer within 60s"
    rows.append(
        (
            "cold start, embedded default, to first tools/list",
            f"{shown}  (imports of the CLI and gateway alone: {imported:.2f}s)",
            "<= 1.5 s",
            median is not None and median <= 1.5 and len(times) == runs,
        )
    )


def _first_tools_list(data: Path, env: dict[str, str]) -> float | None:
    """Seconds from spawning ``serve --http`` to its first tools/list answer (polled every 20 ms), or None."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [PY, "-m", "sentinel_mcp", "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        while time.perf_counter() - t0 < 60 and proc.poll() is None:
            token_file = data / "http-token"
            token = token_file.read_text().strip() if token_file.exists() else None
            try:
                status, _, text = post(
                    url,
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "tools/list",
                        "params": {
                            "_meta": {
                                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                                "io.modelcontextprotocol/clientCapabilities": {},
                            }
                        },
                    },
                    {**call_headers("", token=token), "Mcp-Method": "tools/list"},
                    timeout=5,
                )
                if status == 200 and '"tools"' in text:
                    return time.perf_counter() - t0
            except OSError:
                pass
            time.sleep(0.02)
    finally:
        stop_process(proc)
    return None


# RSS is read at rest, after this long idle at each mark: a quiet gateway gives glibc's free heap pages back
# (sentinel_mcp/app/idle_trim.py checks every 5 s); both marks alike
SETTLE_SECONDS = 12.0


def rss_marks(url: str, body: str, headers: dict, pid: int, calls: int, *, short: float = 1,
              answers_count: bool = True) -> tuple[dict[int, float], int]:
    """The server's RSS after 1k calls and after ``calls`` (16 wrk connections), each read after
    ``SETTLE_SECONDS`` idle, and the calls made.
    ``answers_count``: a bad answer is an error (else only the count of calls matters)."""
    done = 0
    marks: dict[int, float] = {}
    for goal in (1_000, calls):
        while done < goal:
            # short runs, so the count overshoots its goal by one run at most
            r = wrk(url, body, headers, connections=16, seconds=short if goal <= 1_000 else 5)
            done += r.requests
            if r.errors and answers_count:
                raise RuntimeError(f"{r.errors} errors during the memory run")
        time.sleep(SETTLE_SECONDS)
        marks[goal] = rss_mb(pid)
    return marks, done


def memory(tmp: Path, calls: int, rows: list) -> None:
    proc, url = sentinel(tmp, {}, ["bench"], "memory")
    try:
        check_call(url, "bench__noop")
        body, headers = call_body("bench__noop"), call_headers("bench__noop")
        marks, done = rss_marks(url, body, headers, proc.pid, calls)
    finally:
        stop_process(proc)
    growth = marks[calls] / marks[1_000] - 1
    rows.append(
        (
            f"memory: RSS after 1k calls -> after {calls // 1000}k",
            f"{marks[1_000]:.1f} MB -> {marks[calls]:.1f} MB ({growth:+.1%}, {done} calls made)",
            "<= +10%",
            growth <= 0.10,
        )
    )


def check_denied(url: str, body: str, headers: dict) -> None:
    """One call as wrk will send it, answered with the guard's denial (AIRLINE_CANCEL's expected answer)."""
    status, _, text = post(url, body, headers)
    if status != 200 or '"sentinel/decision":"deny"' not in text:
        raise RuntimeError(f"the airline call was not decided: HTTP {status}: {text[:200]}")


def memory_guarded(tmp: Path, calls: int, rows: list) -> None:
    """The memory row on the guard's own path: every call an airline ``cancel_reservation`` in a conversation
    of its own, so the guard loads the conversation into the engine, fetches the reservation, learns its facts
    and decides (denied: not the current user's). The no-op row above loads nothing into the engine; three
    leaks hid there until 2026-12-01 (benchmarks/README.md)."""
    port = free_port()
    direct_url = f"http://127.0.0.1:{port}/mcp"
    up = start([PY, "-m", "examples.airline", "--http", str(port)], direct_url,
               env={**ENV, "PYTHONPATH": str(ROOT)})
    tool, args = AIRLINE_CANCEL
    try:
        proc, url = sentinel(tmp, {"airline": {"url": direct_url}}, [], "memory-guarded",
                             rulebases=AIRLINE_RULEBASES, seeds=AIRLINE_SEEDS)
        try:
            body, headers = call_body(tool, MODERN, args), call_headers(tool, MODERN)
            check_denied(url, body, headers)
            # every answer is a denial (wrk's script counts it a bad answer): only the count matters
            marks, done = rss_marks(url, body, headers, proc.pid, calls, short=2, answers_count=False)
        finally:
            stop_process(proc)
    finally:
        stop_process(up)
    growth = marks[calls] / marks[1_000] - 1
    rows.append((
        f"memory, the guard's path (airline cancel, own conversation): RSS 1k -> {calls // 1000}k calls",
        f"{marks[1_000]:.1f} MB -> {marks[calls]:.1f} MB ({growth:+.1%}, {done} calls made)",
        "<= +10%", growth <= 0.10,
    ))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--memory-calls", type=int, default=100_000)
    ap.add_argument("--skip", default="", help="comma-separated: capacity,upstream,airline,peers,cold,memory")
    args = ap.parse_args()
    if not have_wrk():
        sys.exit("wrk is not installed (make bench installs it through apt)")
    skip = set(filter(None, args.skip.split(",")))
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-pipeline-"))
    rows: list = []
    if "cold" not in skip:
        cold_start(tmp, rows)
    if "capacity" not in skip:
        capacity(tmp, args.seconds, rows)
    if "upstream" not in skip:
        real_upstream(tmp, args.seconds, rows)
    if "airline" not in skip:
        airline_read(tmp, args.seconds, rows)
    if "peers" not in skip:
        peers(tmp, args.seconds, rows)
    if "memory" not in skip:
        memory(tmp, args.memory_calls, rows)
    print(
        f"\nThe pipeline under load ({os.cpu_count()} cores, load generator wrk: 1 thread; CPU = seconds per "
        "second, 1.00 = one core busy)\n"
    )
    width = max(len(r[0]) for r in rows)
    for label, figure, goal, met in rows:
        verdict = "" if met is None else ("  met" if met else "  NOT MET")
        print(f"{label:{width}}  {figure}" + (f"   goal {goal}{verdict}" if goal else ""))


if __name__ == "__main__":
    main()
