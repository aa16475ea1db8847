"""Where SWI-Prolog is initialised, and what C stack it checks on the engine thread (policy/engine_thread.py,
``EngineThread.begin``). Under ``serve`` (every ``shared_engine()``) pyswip starts SWI-Prolog on the caller's
thread (``import_pyswip_core``: ``PL_initialise``, the main thread); the engine thread is one SWI-Prolog
attaches, and it checks that thread's C stack against the thread's own size, ``ENGINE_C_STACK_BYTES``: the
depth a deep term (written in a proof: test_guard_memory) may reach before the writer errs. An engine thread
started before anything imported pyswip is SWI-Prolog's main thread, checked against the process's stack
limit instead. A real SWI-Prolog in a fresh process each (it can be initialised once a process)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

from sentinel_mcp.policy.engine_thread import ENGINE_C_STACK_BYTES

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, resource, sys
from sentinel_mcp.policy import engine, engine_thread
if sys.argv[1] == "serve":
    engine.shared_engine()  # as serve does, on this (the main) thread
    started_here = "pyswip.prolog" in sys.modules
else:
    started_here = False
t = engine_thread.EngineThread()
t.start()
got = t.submit(lambda p: list(p.query("thread_self(X), (X == main -> M = 1 ; M = 0), statistics(c_stack, S)",
                                       normalize=True))).result()
print(json.dumps({"started_before": started_here, "main": got[0]["M"], "c_stack": got[0]["S"],
                  "ulimit": resource.getrlimit(resource.RLIMIT_STACK)[0]}))
"""


def _probe(mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, cwd=ROOT,
                         timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_under_serve_swi_prolog_starts_on_the_main_thread_and_checks_the_engine_threads_own_stack() -> None:
    got = _probe("serve")
    assert got["started_before"] is True  # PL_initialise ran before the engine thread was started
    assert got["main"] == 0  # to SWI-Prolog the engine thread is not its main thread
    assert got["c_stack"] == ENGINE_C_STACK_BYTES, got


def test_an_engine_thread_that_starts_swi_prolog_is_its_main_thread() -> None:
    got = _probe("alone")
    assert got["main"] == 1
    if got["ulimit"] != resource.RLIM_INFINITY:
        assert got["c_stack"] == got["ulimit"], got
