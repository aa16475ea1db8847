"""The child side of ``check_process``: one rulebase check, in a process of its own with its own SWI-Prolog.

Reads one request line on stdin (JSON: the files, the catalog's tools, the bounds of a client's candidate),
runs ``checker.check_paths`` on this process's own engine and writes the problems as one JSON object on
stdout. stdin stays open while the parent waits: at its end (the parent gone, even killed) this process ends
too, whatever the check is doing.

    python -m sentinel_mcp.policy.check_child < request.json
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Coroutine, NoReturn

from sentinel_mcp.policy.catalog_tool import tool_view
from sentinel_mcp.policy.untrusted_rules import UntrustedRules


def end_with_stdin() -> None:
    """Ends the process once stdin ends: the parent closed it, or is gone."""
    try:
        while sys.stdin.buffer.read(4096):
            pass
    finally:
        os._exit(3)


def untrusted_of(u: Any) -> UntrustedRules | None:
    if u is None:
        return None
    return UntrustedRules(
        frozenset(Path(d) for d in u["documents"]), int(u["inference_limit"]),
        {str(k): Path(v) for k, v in u["homes"].items()},
    )


async def _check(request: dict[str, Any]) -> list[dict[str, Any]]:
    from sentinel_mcp.policy.checker import check_paths
    from sentinel_mcp.policy.engine import shared_engine

    catalog = request.get("catalog")
    tools = None if catalog is None else [tool_view(t) for t in catalog]  # without the MCP types' import
    problems = await check_paths(
        shared_engine(), [Path(f) for f in request["files"]], tools, untrusted_of(request.get("untrusted"))
    )
    return [p.model_dump() for p in problems]


def serve_one(
    work: Callable[[dict[str, Any]], Coroutine[Any, Any, Any]], warm: Callable[[], None] | None = None
) -> NoReturn:
    """A bounded child's whole life: ``warm`` (what every request needs, done before one comes: a spare child
    waits ready), one request line from stdin, ``work`` run on it (this process ends when stdin ends), its
    answer as one JSON text. The answer goes out on a copy of stdout, and the rules run with stdout on
    /dev/null (SWI-Prolog's user_output is fd 1, bound when it starts: after the swap), so nothing they could
    write becomes part of it."""
    answer = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    if warm is not None:
        warm()
    line = sys.stdin.buffer.readline()
    if not line:  # stdin ended before a request: the parent is gone, or let this spare go unused
        os._exit(3)
    request = json.loads(line)
    threading.Thread(target=end_with_stdin, daemon=True).start()
    out = json.dumps(asyncio.run(work(request)), default=str)  # a value JSON has no word for: its text
    with os.fdopen(answer, "w", encoding="utf-8") as stream:
        stream.write(out)
        stream.flush()
    os._exit(0)  # the engine's thread is not waited for


def _warm() -> None:
    """The checker's modules imported and this process's SWI-Prolog started (about half a second and more
    than a tenth of the child's start-up): a spare check child has this done before its request comes."""
    from sentinel_mcp.policy import checker  # noqa: F401 - imported now, not when the request has come
    from sentinel_mcp.policy.engine import shared_engine

    asyncio.run(shared_engine().goal("true"))


async def _answer(request: dict[str, Any]) -> dict[str, Any]:
    return {"problems": await _check(request)}


def main() -> None:
    serve_one(_answer, _warm)


if __name__ == "__main__":
    main()
