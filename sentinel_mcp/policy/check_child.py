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

from mcp.types import Tool

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
    tools = None if catalog is None else [Tool.model_validate(t) for t in catalog]
    problems = await check_paths(
        shared_engine(), [Path(f) for f in request["files"]], tools, untrusted_of(request.get("untrusted"))
    )
    return [p.model_dump() for p in problems]


def serve_one(work: Callable[[dict[str, Any]], Coroutine[Any, Any, Any]]) -> NoReturn:
    """A bounded child's whole life: one request line from stdin, ``work`` run on it (this process ends when
    stdin ends), its answer as one JSON text. The answer goes out on a copy of stdout, and the rules run with
    stdout on /dev/null, so nothing they could write (SWI-Prolog's user_output is fd 1) becomes part of it."""
    request = json.loads(sys.stdin.buffer.readline())
    threading.Thread(target=end_with_stdin, daemon=True).start()
    answer = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    out = json.dumps(asyncio.run(work(request)), default=str)  # a value JSON has no word for: its text
    with os.fdopen(answer, "w", encoding="utf-8") as stream:
        stream.write(out)
        stream.flush()
    os._exit(0)  # the engine's thread is not waited for


async def _answer(request: dict[str, Any]) -> dict[str, Any]:
    return {"problems": await _check(request)}


def main() -> None:
    serve_one(_answer)


if __name__ == "__main__":
    main()
