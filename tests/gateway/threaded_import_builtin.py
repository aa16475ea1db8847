"""A built-in module for tests/gateway/test_lazy_builtins.py: it records which thread imported it (a
described built-in's first use imports it in a worker thread, not on the event loop's) and, when asked, fails
on import."""

from __future__ import annotations

import os
import threading
from typing import Any

from sentinel_mcp.swarm.server import create_server as _swarm_server

IMPORTED_IN = threading.current_thread()
if os.environ.get("SENTINEL_TEST_BROKEN_IMPORT"):
    raise RuntimeError("a module of it does not import")


def create_server(ctx: Any) -> Any:
    return _swarm_server(ctx)
