"""Load generation for the pipeline benchmarks: ``wrk`` (compiled, from Debian's package) posting one
JSON-RPC request over keep-alive connections, so the client is not the bottleneck; its CPU time is measured
(``wait4`` rusage) and reported beside every rate. Each request gets an id of its own, as a real client's
requests do (on a handshake-era session, requests sharing an id while one is in flight are not what any
client sends, and a server may serialize or refuse them), and every answer is read: one that is not HTTP 200
with a JSON-RPC ``result``, or whose result says ``isError``, counts as an error. Also: process CPU and RSS
from /proc, and the MCP handshake a handshake-era server needs before ``wrk`` can post calls on its
session."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

TOKEN = "benchmark-owner-token-0123456789"
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
CLK = os.sysconf("SC_CLK_TCK")


@dataclass
class LoadResult:
    rate: float  # calls per second
    p50_ms: float
    p99_ms: float
    requests: int
    errors: int  # non-2xx answers and socket errors
    client_cpu: float  # wrk's CPU seconds per wall second (1.0 = one core busy)
    server_cpu: float  # the measured server's CPU seconds per wall second (its children excluded)
    # the server's main thread (its event loop): seconds per wall second it was ready to run but waited for
    # a CPU (the scheduler's run queue), and the share of the machine's CPU time nobody used; together
    # they say whether the server or the machine was the ceiling of a row
    main_waited: float = 0.0
    machine_idle: float = 0.0


def have_wrk() -> bool:
    return shutil.which("wrk") is not None


def call_body(tool: str, era: str = MODERN, arguments: dict | None = None) -> str:
    params: dict = {"name": tool, "arguments": arguments or {}}
    if era == MODERN:
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                           "io.modelcontextprotocol/clientInfo": {"name": "wrk", "version": "1"},
                           "io.modelcontextprotocol/clientCapabilities": {}}
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})


def call_headers(tool: str, era: str = MODERN, session: str | None = None, token: str | None = TOKEN) -> dict:
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
         "MCP-Protocol-Version": era}
    if era == MODERN:
        h |= {"Mcp-Method": "tools/call", "Mcp-Name": tool}
    if session:
        h["Mcp-Session-Id"] = session
    if token:
        h["Authorization"] = f"Bearer {token}"
    return h


def post(url: str, body: dict | str, headers: dict, timeout: float = 10.0) -> tuple[int, dict, str]:
    data = body if isinstance(body, str) else json.dumps(body)
    req = urllib.request.Request(url, data=data.encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read().decode()


def handshake(url: str, token: str | None = TOKEN, capabilities: dict | None = None) -> str | None:
    """``initialize`` + ``notifications/initialized``; the session id the server gave (None: stateless).
    ``capabilities``: the client's (none by default)."""
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token:
        h["Authorization"] = f"Bearer {token}"
    status, headers, text = post(url, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": HANDSHAKE, "capabilities": capabilities or {},
        "clientInfo": {"name": "wrk", "version": "1"}}}, h)
    if status != 200:
        raise RuntimeError(f"initialize at {url}: HTTP {status}: {text[:300]}")
    sid = headers.get("mcp-session-id")
    h2 = {**h, "MCP-Protocol-Version": HANDSHAKE, **({"Mcp-Session-Id": sid} if sid else {})}
    post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, h2)
    return sid


def check_call(url: str, tool: str, era: str = MODERN, session: str | None = None,
               token: str | None = TOKEN, arguments: dict | None = None) -> None:
    """One call as wrk will send it, answered with a result (else the rates below would count errors)."""
    status, _, text = post(url, call_body(tool, era, arguments), call_headers(tool, era, session, token))
    if status != 200 or '"result"' not in text or '"isError":true' in text.replace(" ", ""):
        raise RuntimeError(f"{tool} at {url}: HTTP {status}: {text[:300]}")


def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of a process (its own, not its children's)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def main_thread_waited(pid: int) -> float:
    """Seconds the main thread of ``pid`` has spent ready to run, waiting for a CPU (``schedstat``)."""
    try:
        return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):  # a kernel without schedstats
        return 0.0


def cpu_times() -> tuple[int, int]:
    """(idle, total) jiffies of the whole machine (idle and I/O wait count as idle)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return fields[3] + fields[4], sum(fields[:8])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def wrk(url: str, body: str, headers: dict, *, connections: int = 16, seconds: float = 5.0,
        server_pid: int | None = None) -> LoadResult:
    """``connections`` keep-alive connections posting ``body`` for ``seconds`` (one wrk thread), its
    ``"id": 1`` numbered afresh for each request."""
    lines = ['wrk.method = "POST"']
    lines += [f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in headers.items()]
    lines += _numbered_requests(body)
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        script = f.name
    try:
        before = proc_cpu(server_pid) if server_pid else 0.0
        waited = main_thread_waited(server_pid) if server_pid else 0.0
        idle0, total0 = cpu_times()
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            ["wrk", "-t1", f"-c{connections}", f"-d{seconds:.0f}s", "--latency", "-s", script, url],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        out = proc.stdout.read() if proc.stdout else ""
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        server = (proc_cpu(server_pid) - before) / wall if server_pid else 0.0
        waited = (main_thread_waited(server_pid) - waited) / wall if server_pid else 0.0
        idle1, total1 = cpu_times()
    finally:
        os.unlink(script)
    if proc.returncode != 0:
        raise RuntimeError(f"wrk failed: {out}")
    return LoadResult(
        rate=_number(r"Requests/sec:\s+([\d.]+)", out),
        p50_ms=_latency(out, "50%"),
        p99_ms=_latency(out, "99%"),
        requests=int(_number(r"(\d+) requests in", out)),
        errors=_errors(out),
        client_cpu=(usage.ru_utime + usage.ru_stime) / wall,
        server_cpu=server,
        main_waited=waited,
        machine_idle=(idle1 - idle0) / max(total1 - total0, 1),
    )


_ID = '"id": 1'


def numbered(body: str, n: int) -> str:
    """``body`` (a ``call_body``) with its id ``n``."""
    return body.replace(_ID, f'"id": {n}', 1)


def _numbered_requests(body: str) -> list[str]:
    """wrk's Lua: each request the body with its own id, each answer checked, the bad ones counted (printed
    by ``done`` as ``bad answers: N``)."""
    if body.count(_ID) != 1:
        raise ValueError(f"the body must hold {_ID} exactly once: {body[:200]}")
    head, tail = body.split(_ID)
    return [
        f"local head, tail = {json.dumps(head + chr(34) + 'id' + chr(34) + ': ')}, {json.dumps(tail)}",
        "local threads = {}",
        "function setup(thread) table.insert(threads, thread) end",
        "function init(args) n = 0; bad = 0 end",
        "function request() n = n + 1; return wrk.format(nil, nil, nil, head .. n .. tail) end",
        "function response(status, headers, body)",
        "  if status ~= 200 or not string.find(body, '\"result\"', 1, true)",
        "      or string.find(body, '\"isError\"%s*:%s*true') then bad = bad + 1 end",
        "end",
        "function done(summary, latency, requests)",
        "  local total = 0",
        "  for _, t in ipairs(threads) do total = total + t:get('bad') end",
        "  io.write(string.format('bad answers: %d\\n', total))",
        "end",
    ]


def _number(pattern: str, text: str) -> float:
    m = re.search(pattern, text)
    return float(m.group(1)) if m else 0.0


def _latency(text: str, label: str) -> float:
    m = re.search(rf"^\s*{re.escape(label)}\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
    if not m:
        return float("nan")
    value, unit = float(m.group(1)), m.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


def _errors(text: str) -> int:
    # a non-2xx answer is also a bad one: counted once
    n = int(_number(r"bad answers:\s+(\d+)", text))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    return n + (sum(int(g) for g in m.groups()) if m else 0)
