"""``serve_with_noop.py`` with a memory probe (issue 21, memory goal): tracemalloc on from the start; on
SIGUSR1 the process writes to $MEMORY_PROBE (JSON) its RSS, traced memory, gc counts and object counts per
type, the top allocation sites, and SWI-Prolog's own figures (atoms, clauses, memory, through the engine's
thread); ``memory_growth.py`` diffs two such reports. Usage: as ``serve_with_noop.py``.
"""

from __future__ import annotations

import collections
import gc
import json
import os
import signal
import sys
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# MEMORY_PROBE_FRAMES=0: no tracemalloc (it slows the server several times; RSS, gc and Prolog figures only)
FRAMES = int(os.environ.get("MEMORY_PROBE_FRAMES", "1"))
if FRAMES:
    tracemalloc.start(FRAMES)

from sentinel_mcp.core import builtin  # noqa: E402

builtin.BUILTINS["bench"] = "noop_builtin:create_server"

from sentinel_mcp.cli import main  # noqa: E402

# SWI-Prolog's statistics/2 keys that would show growth inside the engine (atom table, clause store, stacks)
PROLOG_KEYS = ("atoms", "atom_space", "functors", "clauses", "predicates", "modules", "memory", "globalused",
               "trailused", "localused", "table_space_used", "c_stack", "agc", "agc_gained", "threads")


def _prolog() -> dict[str, Any]:
    from sentinel_mcp.policy.engine import shared_engine

    def job(p: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in PROLOG_KEYS:
            try:
                rows = list(p.query(f"statistics({key}, V)", maxresult=1))
                v = rows[0]["V"] if rows else None
                out[key] = v if isinstance(v, (int, float)) else str(v)
            except Exception as e:  # noqa: BLE001 - a key this SWI-Prolog lacks
                out[key] = f"n/a: {type(e).__name__}"
        # facts per session module: dynamic clauses the guard keeps per conversation
        rows = list(p.query("findall(M, current_module(M), Ms), length(Ms, N)", maxresult=1))
        out["module_count"] = rows[0]["N"] if rows else None
        return out

    try:
        return shared_engine().run_sync(job, timeout=30)
    except Exception as e:  # noqa: BLE001 - reported, not fatal
        return {"error": repr(e)}


def _report(*_: Any) -> None:
    gc.collect()
    stats = []
    if FRAMES:
        snap = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
        stats = snap.statistics("lineno")
    types = collections.Counter(type(o).__name__ for o in gc.get_objects())
    rss = 0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    cur, peak = tracemalloc.get_traced_memory()
    report = {
        "rss_kb": rss,
        "traced": cur,
        "traced_peak": peak,
        "gc_counts": gc.get_count(),
        "gc_stats": gc.get_stats(),
        "objects": len(gc.get_objects()),
        "types": dict(types.most_common(300)),
        "sites": {f"{s.traceback[0].filename}:{s.traceback[0].lineno}": [s.size, s.count]
                  for s in stats[:3000]},
        "prolog": _prolog(),
    }
    target = Path(os.environ.get("MEMORY_PROBE", "memory_probe.json"))
    tmp = target.with_suffix(".part")
    tmp.write_text(json.dumps(report))
    tmp.replace(target)  # the reader sees a whole report or none


signal.signal(signal.SIGUSR1, _report)

if __name__ == "__main__":
    sys.exit(main())
