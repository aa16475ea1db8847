"""The garbage collector paused while start-up imports modules (issue 21, cold start).

An import builds long-lived objects only (modules, classes, pydantic schemas: ~130k of them for ``serve``), so
every collector pass during imports, two of them full, scanned a growing heap and freed next to nothing:
0.15 to 0.2 s of the ~1.5 s of CPU that ``serve`` spent to its first answer. Inside ``imports_uncollected``
the collector does not run; when the outermost one ends, what exists is frozen (long-lived: later full passes
skip it) and the collector is enabled again if it was. Only imports and config parsing run inside (bounded
work, no client input). Nested and concurrent uses (a worker thread importing too) count: the collector comes
back when the last one ends, never left off by an interleaving. Only a first import pauses: once the module is
in ``sys.modules`` (a test calling the CLI again, a config read again while serving) nothing is paused or
frozen, so objects of a running process are never frozen by a later look-up.
"""

from __future__ import annotations

import contextlib
import gc
import sys
import threading
from typing import Iterator

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextlib.contextmanager
def imports_uncollected(module: str) -> Iterator[None]:
    """Pause the collector around the block if ``module`` (what the block imports) is not imported yet."""
    global _depth, _was_enabled
    if module in sys.modules:
        yield
        return
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()  # a host that disabled the collector keeps it disabled
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.freeze()
                if _was_enabled:
                    gc.enable()
