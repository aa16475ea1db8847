"""A pytest plugin that finds the tests that wait: per test, wall time against CPU time.

``-p tests.support.wait_clock`` with ``WAIT_CLOCK_OUT=FILE`` appends one JSON line a test to FILE:
``{"id", "wall", "cpu"}``, the CPU being this process's and its reaped children's (``getrusage``
``RUSAGE_SELF`` + ``RUSAGE_CHILDREN``: a process the test started and waited for counts; one still running
at the test's end does not). A test whose wall is many times its CPU is waiting: on a timeout, a sleep, a
poll, a grace period. On a loaded machine every wall is several times its CPU: compare a test's wall to the
others' of the same run, or a CI run's time to the CPU measured here (benchmarks/README.md, "Suite time").

It also appends to ``FILE.popenwait`` each ``subprocess.Popen.wait`` that took over ``WAIT_CLOCK_POPEN``
seconds (3 by default) with where in the tests it was called: a process that does not end on its signal
and is killed when the caller's grace runs out shows there. Never loaded unless asked (not in conftest)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import time
import traceback
from collections.abc import Iterator
from typing import Any

import pytest

_OUT = os.environ.get("WAIT_CLOCK_OUT", "")
_POPEN_SECONDS = float(os.environ.get("WAIT_CLOCK_POPEN", "3"))


def _cpu() -> float:
    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


def _write(path: str, row: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    wall, cpu = time.monotonic(), _cpu()
    yield
    if _OUT:
        _write(_OUT, {"id": item.nodeid, "wall": time.monotonic() - wall, "cpu": _cpu() - cpu})


_popen_wait = subprocess.Popen.wait


def _timed_wait(self: subprocess.Popen, timeout: float | None = None) -> int:
    start = time.monotonic()
    try:
        return _popen_wait(self, timeout)
    finally:
        took = time.monotonic() - start
        if _OUT and took > _POPEN_SECONDS:
            stack = traceback.extract_stack()[:-1]
            tests = [f"{f.filename}:{f.lineno}" for f in stack if "/tests/" in f.filename]
            _write(_OUT + ".popenwait", {"seconds": round(took, 1), "args": str(self.args)[:200],
                                         "where": tests[-4:]})


def pytest_configure(config: pytest.Config) -> None:
    if _OUT:
        subprocess.Popen.wait = _timed_wait  # type: ignore[method-assign]
