"""``serve_with_noop.py`` with a memory probe (issue 21, memory goal): tracemalloc on from the start; on
SIGUSR1 the process writes to $MEMORY_PROBE (JSON) its RSS, traced memory, gc counts and object counts per
type, the top allocation sites, SWI-Prolog's own figures (atoms, clauses, memory, through the engine's
thread), the memory outside Python's objects (SQLite's heap, glibc's mapped and free heap bytes), and on
request the lengths of the large containers; ``memory_growth.py`` diffs two such reports.
Usage: as ``serve_with_noop.py``.
"""

from __future__ import annotations

import collections
import gc
import json
import os
import signal
import sys
import tracemalloc
import weakref
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# MEMORY_PROBE_FRAMES=0: no tracemalloc (it slows the server several times; RSS, gc and Prolog figures only)
FRAMES = int(os.environ.get("MEMORY_PROBE_FRAMES", "1"))
CONTAINERS = os.environ.get("MEMORY_PROBE_CONTAINERS") == "1"  # see ``_containers``
# MEMORY_PROBE_TRIM=1: after reading RSS, glibc's malloc_trim(0) and RSS again (what a trim would return)
TRIM = os.environ.get("MEMORY_PROBE_TRIM") == "1"
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


def _containers(own: list[Any]) -> list[int]:
    """The lengths of the large containers (dicts, lists, sets, deques of 256 items or more) reachable from
    the modules and the threads' frames, frozen ones included: a map or list that grows a call at a time shows
    here even when what it holds (strings, numbers) is not an object the collector tracks. The walk holds a
    set of every object's id for its time (tens of MB), so only on request (MEMORY_PROBE_CONTAINERS=1).
    ``own``: the report's list of objects (not walked)."""
    seen: set[int] = set()
    sizes: list[int] = []
    todo: list[Any] = [sys.modules, *gc.get_objects()]
    here = sys._getframe()
    probe = here.f_back  # ``_report``, in the signal handler; under it, the frame the signal interrupted
    interrupted = probe.f_back if probe is not None else None
    todo += [f for f in sys._current_frames().values() if f is not here]
    todo += [interrupted] if interrupted is not None else []
    # the walk's own and the report's, not the gateway's
    seen.update(map(id, (seen, sizes, todo, here, probe, own)))
    kinds = (dict, list, set, collections.deque)
    while todo:
        o = todo.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, kinds) and len(o) >= 256:
            sizes.append(len(o))
        for r in gc.get_referents(o):
            if id(r) in seen:
                continue
            if gc.is_tracked(r):
                todo.append(r)
            elif isinstance(r, kinds) and len(r) >= 256:  # a map of strings only: untracked, still counted
                seen.add(id(r))
                sizes.append(len(r))
    return sorted(sizes, reverse=True)[:200]


def _native() -> dict[str, Any]:
    """Memory outside Python's objects: SQLite's own heap (``sqlite3_memory_used`` of the library the
    ``sqlite3`` module uses: page caches, statements) and glibc's heaps over all arenas (``malloc_info``: the
    bytes mapped, and of them the free bytes malloc keeps, i.e. fragmentation)."""
    import ctypes
    import re
    import tempfile

    out: dict[str, Any] = {}
    try:
        import _sqlite3

        used = ctypes.CDLL(_sqlite3.__file__).sqlite3_memory_used
        used.restype = ctypes.c_int64
        out["sqlite_kb"] = used() // 1024
    except (OSError, AttributeError) as e:
        out["sqlite_kb"] = f"n/a: {e}"
    try:
        libc = ctypes.CDLL(None)
        libc.fopen.restype = ctypes.c_void_p
        libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
        libc.fclose.argtypes = [ctypes.c_void_p]
        with tempfile.NamedTemporaryFile(suffix=".xml") as f:
            fp = libc.fopen(f.name.encode(), b"w")
            libc.malloc_info(0, fp)
            libc.fclose(fp)
            xml = Path(f.name).read_text()
        tail = xml[xml.rfind("</heap>"):]  # the totals over every arena follow the last heap
        free = sum(int(m) for m in re.findall(r'<total type="(?:fast|rest)" count="\d+" size="(\d+)"', tail))
        current = re.search(r'<system type="current" size="(\d+)"', tail)
        out["malloc_free_kb"] = free // 1024
        out["malloc_mapped_kb"] = int(current.group(1)) // 1024 if current else None
        out["malloc_arenas"] = xml.count("<heap nr=")
    except (OSError, AttributeError, ValueError) as e:
        out["malloc"] = f"n/a: {e}"
    out["python_blocks"] = sys.getallocatedblocks()
    idle = sys.modules.get("sentinel_mcp.app.idle_trim")
    out["idle_trims"] = getattr(idle, "trims", None)  # the gateway's own trims once quiet (idle_trim.py)
    return out


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _report(*_: Any) -> None:
    gc.collect()
    stats = []
    if FRAMES:
        snap = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
        stats = snap.statistics("lineno")
    objects = gc.get_objects()  # not what start-up built: the gateway freezes it (app/collector.py)
    types = collections.Counter(type(o).__name__ for o in objects)
    # what the weak references point at (a weak reference kept a call would name its object's type here)
    types.update(f"weakref to {type(o()).__name__}" for o in objects if type(o) is weakref.ReferenceType)
    rss = _rss_kb()
    trimmed = None
    if TRIM:  # what glibc gives back of its free heap memory: malloc_trim(0) now, RSS again
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
        trimmed = _rss_kb()
    cur, peak = tracemalloc.get_traced_memory()
    report = {
        "rss_kb": rss,
        "rss_trimmed_kb": trimmed,
        "traced": cur,
        "traced_peak": peak,
        "gc_counts": gc.get_count(),
        "gc_stats": gc.get_stats(),
        "objects": len(objects),
        "containers": _containers(objects) if CONTAINERS else [],
        "types": dict(types.most_common(300)),
        "sites": {f"{s.traceback[0].filename}:{s.traceback[0].lineno}": [s.size, s.count]
                  for s in stats[:3000]},
        "prolog": _prolog(),
        "native": _native(),
    }
    target = Path(os.environ.get("MEMORY_PROBE", "memory_probe.json"))
    tmp = target.with_suffix(".part")
    tmp.write_text(json.dumps(report))
    tmp.replace(target)  # the reader sees a whole report or none


signal.signal(signal.SIGUSR1, _report)

if __name__ == "__main__":
    sys.exit(main())
