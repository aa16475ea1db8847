"""The garbage collector while the gateway serves.

What start-up built lives as long as the gateway: it is frozen out of the collector's full passes (they
scanned it all: pauses of up to 0.5 s on the event loop under load). And the youngest generation is collected
after ``YOUNG_THRESHOLD`` new container objects instead of CPython's 700: sixteen calls in flight hold more
than 700 young objects between them, so the default collected (and promoted, and collected again) objects
that were still in use, every dozen calls; about a tenth of the event loop's time per call (issue 21,
benchmarks/README.md). Objects without cycles are freed by reference counting either way; cyclic garbage
waits for at most ``YOUNG_THRESHOLD`` allocations, a bounded amount (the memory row of ``hot_path.py``).

Before that, start-up imports its modules with the collector paused (``core/import_collector.py``).
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator

YOUNG_THRESHOLD = 10_000


@contextlib.contextmanager
def serving_collector() -> Iterator[None]:
    """Freeze what exists now and raise the young generation's threshold; the old threshold back on exit."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(before[0], YOUNG_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
