"""A test upstream whose ``work(mark)`` records that it started (fsynced), then waits until released (a file
next to its log: ``<log>.release``, or ``<log>.release-<mark>`` for one mark; bounded by count), records that
it finished and answers. Counting the ``start:`` lines tells whether a task's tool call ran once, twice or
never. ``done(mark)`` reads whether a ``work`` of the mark finished (the upstream's own state, shared by every
process of it through the log); ``peek(mark)``, a read, is held as ``work`` is (a decision in progress), and
``keep(mark)`` is a write that answers at once."""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import os
import time
import warnings
from pathlib import Path

from mcp import MCPDeprecationWarning
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
mcp = MCPServer("slow", version="1.0")
LOG = Path(os.environ["SLOW_LOG"])


def _record(line: str) -> None:
    fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


@mcp.tool()
def work(mark: str) -> str:
    """Start, wait to be released, finish."""
    _record("start:" + mark)
    _held(mark)
    _record("done:" + mark)
    return "done:" + mark


def _held(mark: str) -> None:
    for _ in range(600):  # at most a minute
        if (
            LOG.with_name(LOG.name + ".release").exists()
            or LOG.with_name(f"{LOG.name}.release-{mark}").exists()
        ):
            break
        time.sleep(0.1)


def _lines() -> list[str]:
    return LOG.read_text().splitlines() if LOG.exists() else []


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
def done(mark: str) -> dict[str, str]:
    """Whether a work of the mark finished."""
    return {"done": "yes" if "done:" + mark in _lines() else "no"}


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
def peek(mark: str) -> dict[str, str]:
    """A read held until released."""
    _record("peek:" + mark)
    _held(mark)
    return {"seen": "no"}


@mcp.tool()
def keep(mark: str) -> str:
    """A write that answers at once."""
    _record("keep:" + mark)
    return "kept:" + mark


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    mcp.run("stdio")
