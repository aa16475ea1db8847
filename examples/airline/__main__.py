"""Run the airline MCP server: stdio by default, or streamable HTTP at /mcp with `--http PORT`.

    python -m examples.airline                  # stdio
    python -m examples.airline --http 8931      # http://127.0.0.1:8931/mcp
    python -m examples.airline --permissive     # write tools that check nothing (for policy tests)
    AIRLINE_DB=/path/db.json python -m examples.airline

The command line is every domain's (``examples/domain_cli.py``); this names the domain and its parts.
"""

from __future__ import annotations

import sys

from examples.domain_cli import Domain
from examples.domain_cli import main as run

from .database import DB_ENV_VAR, DatabaseLoadError, AirlineDatabase
from .server import create_server

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
    sys.exit(main())
