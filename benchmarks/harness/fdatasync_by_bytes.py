"""What an ``fdatasync`` costs on this disk by the bytes written before it (issue 21: is a smaller audit
commit a cheaper one?). A write-ahead log's shape: a file grown once to its size (written, synced), then
each "commit" overwrites the next N bytes in place with ``pwrite`` (frames of a page + 24 bytes, two writes
a frame as SQLite does) and syncs; the offset wraps at the file's end as a checkpointed log restarts. Sizes
alternate round by round, so the machine's load falls on every size alike. Prints p50 and p90 of the sync
alone and of writes + sync, and the thread's CPU a commit (``CLOCK_THREAD_CPUTIME_ID``: almost all of it the
kernel's, in the writes and the sync), per size.
Usage: python benchmarks/harness/fdatasync_by_bytes.py [--dir DIR] [--commits N] [--rounds R] [--frames 1,2,4]
       [--pages 1024,4096]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Iterator

FRAME_HEADER = 24
LOG_BYTES = 4 * 1024 * 1024  # SQLite's default checkpoint size: 1000 pages of 4 KiB


def commit_times(fd: int, frames: int, page: int, commits: int,
                 offset: int) -> tuple[list[float], list[float], int]:
    header, body = b"h" * FRAME_HEADER, b"p" * page
    sync, whole = [], []
    for _ in range(commits):
        t0 = time.perf_counter()
        for _ in range(frames):
            if offset + FRAME_HEADER + page > LOG_BYTES:
                offset = 32
            os.pwrite(fd, header, offset)
            os.pwrite(fd, body, offset + FRAME_HEADER)
            offset += FRAME_HEADER + page
        t1 = time.perf_counter()
        os.fdatasync(fd)
        t2 = time.perf_counter()
        sync.append((t2 - t1) * 1000)
        whole.append((t2 - t0) * 1000)
    return sync, whole, offset


@contextlib.contextmanager
def log_file(directory: str) -> Iterator[int]:
    """A file of the log's size in ``directory``, its blocks written and synced (no growth below), open."""
    path = Path(tempfile.mkstemp(prefix="fdatasync-", dir=directory)[1])
    fd = os.open(path, os.O_RDWR)
    try:
        os.pwrite(fd, b"\0" * LOG_BYTES, 0)
        os.fsync(fd)
        yield fd
    finally:
        os.close(fd)
        path.unlink()


def commit_latency(directory: str, commits: int = 100, frames: int = 8) -> tuple[float, float]:
    """p50 and p90 ms of a commit's writes + ``fdatasync`` in ``directory`` (8 frames: the capacity row's
    group commit of 7-9 rows wrote ~16 ``pwrite``s), for the row's disk ceiling (benchmarks/README.md)."""
    with log_file(directory) as fd:
        _, whole, _ = commit_times(fd, frames, 4096, commits, 32)
    q = statistics.quantiles(whole, n=10)
    return statistics.median(whole), q[8]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--commits", type=int, default=200, help="commits per size per round")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--frames", default="1,2,3,4,5,6,8")
    ap.add_argument("--pages", default="4096", help="page sizes, alternated with the frame counts")
    args = ap.parse_args()
    sizes = [(int(p), int(f)) for p in args.pages.split(",") for f in args.frames.split(",")]
    with log_file(args.dir) as fd:
        system: dict[tuple[int, int], float] = {n: 0.0 for n in sizes}
        sync: dict[tuple[int, int], list[float]] = {n: [] for n in sizes}
        whole: dict[tuple[int, int], list[float]] = {n: [] for n in sizes}
        offset = 32
        for r in range(args.rounds):
            for page, n in sizes if r % 2 == 0 else reversed(sizes):
                before = time.thread_time()
                s, w, offset = commit_times(fd, n, page, args.commits, offset)
                system[page, n] += time.thread_time() - before
                sync[page, n] += s
                whole[page, n] += w
    print(f"fdatasync after N frames of a page + {FRAME_HEADER} bytes, in {args.dir}, "
          f"{args.rounds} alternated rounds x {args.commits} commits, load {os.getloadavg()[0]:.1f}; ms")
    print(f"{'page':>5} {'frames':>6} {'bytes':>7} {'sync p50':>9} {'sync p90':>9} {'write+sync p50':>15} "
          f"{'CPU':>7}")
    for page, n in sizes:
        q = statistics.quantiles(sync[page, n], n=10)
        print(f"{page:5} {n:6} {n * (page + FRAME_HEADER):7} {statistics.median(sync[page, n]):9.3f} "
              f"{q[8]:9.3f} {statistics.median(whole[page, n]):15.3f} "
              f"{system[page, n] * 1000 / len(sync[page, n]):7.3f}")


if __name__ == "__main__":
    main()
