"""What a catalog rebuild costs the schema checks (``gateway/argument_check.py``,
``gateway/result_check.py``): every tool listed anew (new ``Tool`` objects, the same schemas), then each
tool's first call prepares its input and output validators. Before ``gateway/schema_validators.py`` each was
compiled again (the metaschema check); now a schema compiled once is found by its digest. CPU of the process
(worker threads included) per rebuild.

Usage: python benchmarks/schema_rebuild.py [--tools N] [--rebuilds R]
Run it from two trees alternately to compare (it imports the tree it lives in).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from mcp.types import Tool  # noqa: E402

from sentinel_mcp.gateway.argument_check import ArgumentCheck  # noqa: E402
from sentinel_mcp.gateway.result_check import ResultCheck  # noqa: E402

SCALARS = ("string", "integer", "number", "boolean")


def tools(n: int) -> list[Tool]:
    """SDK-like tools: an object of a few named scalars in, another out (each tool its own names)."""
    out = []
    for i in range(n):
        props = {f"arg{i}_{k}": {"type": SCALARS[k % 4], "title": f"Arg {k}"} for k in range(3 + i % 4)}
        result = {f"out{i}_{k}": {"type": SCALARS[(k + i) % 4]} for k in range(2 + i % 5)}
        out.append(Tool(name=f"t{i}",
                        input_schema={"type": "object", "properties": props, "required": [*props][:1]},
                        output_schema={"type": "object", "properties": result, "required": [*result]}))
    return out


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", type=int, default=40)
    ap.add_argument("--rebuilds", type=int, default=20)
    args = ap.parse_args()
    listed = tools(args.tools)
    arguments, results = ArgumentCheck(), ResultCheck()
    for tool in listed:  # the first listing: compiled in both trees
        await arguments.prepare(tool)
        await results._compiled(tool)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for _ in range(args.rebuilds):
        listed = [t.model_copy() for t in listed]  # what a rebuild hands the checks: new objects
        for tool in listed:
            await arguments.prepare(tool)
            await results._compiled(tool)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    r = args.rebuilds
    print(f"per rebuild of {args.tools} tools: {cpu / r * 1e3:8.2f} ms CPU  {wall / r * 1e3:8.2f} ms wall  "
          f"({cpu / r / args.tools * 1e6:7.1f} us CPU a tool)")


if __name__ == "__main__":
    asyncio.run(main())
