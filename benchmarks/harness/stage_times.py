"""Per-stage wall time per call (the profile breakdown of issue 21): ``serve_with_noop.py`` with timers around
the pipeline's stages; on exit (SIGINT) it writes ms per call of each stage to $STAGE_TIMES (default
stage_times.txt). Stages nest (execute contains decided, forward, observe, ...).
Usage: python benchmarks/harness/stage_times.py -c CONFIG serve --http 127.0.0.1:PORT, load it, then SIGINT.
"""

import atexit
import sys
import time
import collections
import functools
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sentinel_mcp.core import builtin

builtin.BUILTINS["bench"] = "noop_builtin:create_server"
T = collections.defaultdict(float)
N = collections.Counter()
FIRST: list = []  # process CPU when the first timed stage ran (start-up excluded from CPU per call)


def timed(cls, name, label=None):
    f = getattr(cls, name)
    label = label or f"{cls.__name__}.{name}"

    @functools.wraps(f)
    async def w(*a, **k):
        if not FIRST and label == "Front.call_tool":
            FIRST.append(time.process_time())
        t = time.perf_counter()
        try:
            return await f(*a, **k)
        finally:
            T[label] += time.perf_counter() - t
            N[label] += 1

    setattr(cls, name, staticmethod(w) if isinstance(cls.__dict__.get(name), staticmethod) else w)


def timed_sync(cls, name):
    f = getattr(cls, name)
    label = f"{cls.__name__}.{name}"

    @functools.wraps(f)
    def w(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            T[label] += time.perf_counter() - t
            N[label] += 1

    setattr(cls, name, w)


from sentinel_mcp.gateway.front import Front
from sentinel_mcp.gateway.core import Gateway
from sentinel_mcp.gateway.argument_check import ArgumentCheck
from sentinel_mcp.gateway.call_record import CallRecord, RecordsGate
from sentinel_mcp.gateway.upstream import Upstream
from sentinel_mcp.app.http_app import CallerGuard
from sentinel_mcp.gateway.wire_guard import WireGuard

from sentinel_mcp.gateway.audit import AuditLog
from sentinel_mcp.storage.sqlite import SQLiteDatabase

timed(Front, "call_tool")
for step in ("_route", "_validate", "_decide", "_forward", "_observe", "_done"):
    timed(Gateway, step)
timed(AuditLog, "write")
# the audit's writer thread: one commit (and its fsync) per group of queued writes
timed_sync(SQLiteDatabase, "_commit_group")
timed(Gateway, "execute")
timed(Gateway, "run")
timed(Gateway, "_ask_guard")
timed(CallRecord, "decided")
timed(CallRecord, "finished")
timed(CallRecord, "final")
timed(Upstream, "call_tool")
timed(RecordsGate, "problem")
timed_sync(ArgumentCheck, "check")  # the schema and limits (Gateway._validate)
timed_sync(Front, "conversation")
timed(CallerGuard, "__call__")
timed(WireGuard, "__call__")
try:
    from sentinel_mcp.policy.guard import PolicyGuard

    timed(PolicyGuard, "decide")
    timed(PolicyGuard, "observe")
except ImportError as e:
    print(e, file=sys.stderr)


def dump():
    n = N["Front.call_tool"] or 1
    with open(os.environ.get("STAGE_TIMES", "stage_times.txt"), "w") as f:
        cpu = time.process_time() - (FIRST[0] if FIRST else 0.0)
        f.write(f"{'process CPU since 1st call':32} {1000 * cpu / n:8.3f} ms/call  ({n} calls)\n")
        for k in sorted(T, key=lambda k: -T[k]):
            f.write(f"{k:32} {1000 * T[k] / n:8.3f} ms/call  ({N[k]} times)\n")


atexit.register(dump)
from sentinel_mcp.cli import main

sys.exit(main())
