"""Run the airline MCP server: stdio by default, or streamable HTTP at /mcp with `--http PORT`.

    python -m examples.airline                  # stdio
    python -m examples.airline --http 8931      # http://127.0.0.1:8931/mcp
    python -m examples.airline --permissive     # write tools that check nothing (for policy tests)
    AIRLINE_DB=/path/db.json python -m examples.airline

The command line is every domain's (``examples/domain_cli.py``); this names the domain and its parts.
"""

from __future__ import annotations

import gc
import sys

if __name__ == "__main__":
    # run as a program: the imports below (the MCP SDK, its pydantic models) build long-lived objects only,
    # and ~200 collector passes over them, two full, freed next to nothing (issue 21, cold start): paused
    # here, what they built frozen before serving
    gc.disable()

from examples.domain_cli import Domain  # noqa: E402
from examples.domain_cli import main as run  # noqa: E402

from .database import DB_ENV_VAR, DatabaseLoadError, AirlineDatabase  # noqa: E402
from .server import create_server  # noqa: E402

DOMAIN = Domain(
    name="airline",
    description="tau2-bench airline domain as an MCP server",
    db_env_var=DB_ENV_VAR,
    load=AirlineDatabase.load,
    load_error=DatabaseLoadError,
    create_server=create_server,
)


def main(argv: list[str] | None = None) -> int:
    return run(DOMAIN, argv)


if __name__ == "__main__":
    gc.freeze()
    gc.enable()
    sys.exit(main())
