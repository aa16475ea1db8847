"""A test upstream that records what it executed (fsynced before it answers), and can misbehave.

Tools: ``do(mark)`` appends the mark to $RECORDER_LOG, then answers; ``garbage()`` writes a line that is
not JSON-RPC to stdout and never answers; ``echo(text)``. With $RECORDER_GRANDCHILD set it starts a
background ``sleep`` that it never waits for (a grandchild of the gateway, to check no orphan is left).
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import os
import subprocess
import sys
import time
import warnings

from mcp import MCPDeprecationWarning
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
RO = ToolAnnotations(read_only_hint=True)
mcp = MCPServer("recorder", version="1.0")
LOG = os.environ.get("RECORDER_LOG")
WIRE = os.dup(1)  # the SDK points fd 1 away from the wire while serving; garbage must reach the wire


@mcp.tool(annotations=RO)
def do(mark: str) -> str:
    """Record ``mark`` as executed (durably), then answer. (Not called ``token``: the audit log's redactor
    masks arguments named like secrets, and the tests read the marks back from the log.)"""
    if LOG:
        fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (mark + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
    return "done:" + mark


@mcp.tool(annotations=RO)
def echo(text: str) -> str:
    return text


@mcp.tool(annotations=RO)
def garbage() -> str:
    """Write something that is not JSON-RPC where the answer should be, then hang."""
    os.write(WIRE, b"this is not json-rpc\n")
    time.sleep(60)
    return "never"


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    if os.environ.get("RECORDER_GRANDCHILD"):
        subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    mcp.run("stdio")
    sys.exit(0)
