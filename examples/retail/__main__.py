"""Run the retail MCP server: stdio by default, or streamable HTTP at /mcp with `--http PORT`.

    python -m examples.retail                  # stdio
    python -m examples.retail --http 8932      # http://127.0.0.1:8932/mcp
    python -m examples.retail --permissive     # write tools that check nothing (for policy tests)
    RETAIL_DB=/path/db.json python -m examples.retail

The command line is every domain's (``examples/domain_cli.py``); this names the domain and its parts.
"""

from __future__ import annotations

import sys

from examples.domain_cli import Domain
from examples.domain_cli import main as run

from .database import DB_ENV_VAR, DatabaseLoadError, RetailDatabase
from .server import create_server

DOMAIN = Domain(name="retail", description="tau2-bench retail domain as an MCP server", db_env_var=DB_ENV_VAR,
                load=RetailDatabase.load, load_error=DatabaseLoadError, create_server=create_server)


def main(argv: list[str] | None = None) -> int:
    return run(DOMAIN, argv)


if __name__ == "__main__":
    sys.exit(main())
