"""glibc's free heap memory given back when the gateway goes quiet (``app/idle_trim.py``): when a trim is due
(counted on a clock the test moves: after work, at the first quiet check, once), and that the trim really
lowers this process's RSS after a fragmented heap was freed (bytes, read from /proc)."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

from sentinel_mcp.app.idle_trim import BUSY_CPU_SECONDS, CHECK_SECONDS, IdleTrim, malloc_trim


class Clock:
    def __init__(self) -> None:
        self.cpu = 0.0

    def __call__(self) -> float:
        return self.cpu


def _checks(trim: IdleTrim, clock: Clock, cpu_per_check: list[float]) -> list[bool]:
    out = []
    for used in cpu_per_check:
        clock.cpu += used
        out.append(trim.due(CHECK_SECONDS))
    return out


def test_a_trim_is_due_once_at_the_first_quiet_check_after_work() -> None:
    clock = Clock()
    trim = IdleTrim(clock)
    busy, quiet = CHECK_SECONDS * 0.9, 0.0
    assert _checks(trim, clock, [quiet] * 5) == [False] * 5  # never busy: nothing to give back
    assert _checks(trim, clock, [busy] * 4) == [False] * 4  # busy: never on the hot path
    assert _checks(trim, clock, [quiet, quiet, quiet]) == [True, False, False]  # once, then not again
    assert _checks(trim, clock, [BUSY_CPU_SECONDS / 4] * 3 + [quiet]) == [False, False, False, False]
    assert _checks(trim, clock, [BUSY_CPU_SECONDS, quiet]) == [False, True]  # enough work again: once more
    assert trim.trims == 2
    # a little CPU at each check (the trim's own, timers) is still quiet
    assert _checks(trim, clock, [busy, 0.01, 0.01]) == [False, True, False]


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_the_trim_gives_a_fragmented_heap_back() -> None:
    fn = malloc_trim()
    if fn is None:
        pytest.skip("no malloc_trim in this C library (glibc only)")
    libc = ctypes.CDLL(None)
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    blocks = [libc.malloc(8_000) for _ in range(8_000)]  # ~64 MB in the heap, below mmap's threshold
    for b in blocks:
        libc.memset(b, 1, 8_000)  # resident
    kept = blocks[::32]  # one block in 32 stays: the heap cannot shrink from its top
    for b in blocks:
        if b not in kept:
            libc.free(b)
    before = _rss_kb()
    fn(0)
    after = _rss_kb()
    for b in kept:
        libc.free(b)
    assert before - after >= 32_000, (before, after)  # at least half of the ~62 MB freed went back
