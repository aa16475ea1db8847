"""Sentinel's CLI with the lean 2025 path observed, for tests: each request id it streams is appended to
$LEAN_SESSION_LOG (so a test knows which path answered), ``direct:ID`` when the request was handed to
the session's dispatcher directly (``session_dispatch.dispatch``), and $LEAN_SESSION_PING (seconds) shortens
the ping interval of both paths alike (the lean stream's and the SDK's ``EventSourceResponse``), with the lean
watcher started after $LEAN_SESSION_WATCH seconds."""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import os
import sys
from typing import Any

from sse_starlette import EventSourceResponse

from sentinel_mcp.app import lean_session_calls as lean
from sentinel_mcp.cli import main

_stream = lean._stream


async def _noted(transport: Any, message: Any, *args: Any) -> None:
    with open(os.environ["LEAN_SESSION_LOG"], "a", encoding="utf-8") as f:
        f.write(f"{message.id}\n")
    await _stream(transport, message, *args)


_dispatch = lean.dispatch


def _dispatched(kernel: Any, message: Any, metadata: Any) -> bool:
    handed = _dispatch(kernel, message, metadata)
    if handed:
        with open(os.environ["LEAN_SESSION_LOG"], "a", encoding="utf-8") as f:
            f.write(f"direct:{message.id}\n")
    return handed


lean._stream = _noted  # type: ignore[assignment]
lean.dispatch = _dispatched  # type: ignore[assignment]
if os.environ.get("LEAN_SESSION_PING"):
    lean.PING_SECONDS = EventSourceResponse.DEFAULT_PING_INTERVAL = float(os.environ["LEAN_SESSION_PING"])
if os.environ.get("LEAN_SESSION_WATCH"):
    lean.WATCH_AFTER = float(os.environ["LEAN_SESSION_WATCH"])

if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    sys.exit(main())
