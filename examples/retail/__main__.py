"""Run the retail MCP server: stdio by default, or streamable HTTP at /mcp with `--http PORT`.

    python -m examples.retail                  # stdio
    python -m examples.retail --http 8932      # http://127.0.0.1:8932/mcp
    python -m examples.retail --permissive     # write tools that check nothing (for policy tests)
    RETAIL_DB=/path/db.json python -m examples.retail
"""

from __future__ import annotations

import argparse
import sys

from .database import DB_ENV_VAR, RetailDatabase, DatabaseLoadError
from .server import create_server


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m examples.retail",
                                     description="tau2-bench retail domain as an MCP server")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP at /mcp on this port")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    parser.add_argument("--permissive", action="store_true",
                        help="write tools check nothing (to test what a policy enforces by itself)")
    parser.add_argument("--db", help=f"db.json to load (default ${DB_ENV_VAR}, else the bundled pristine copy)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        database = RetailDatabase.load(args.db)
    except DatabaseLoadError as exc:
        print(f"retail: {exc}", file=sys.stderr, flush=True)
        return 2
    server = create_server(database, permissive=args.permissive)
    if args.http is None:
        server.run("stdio")
    else:
        print(f"retail: serving http://{args.host}:{args.http}/mcp", file=sys.stderr, flush=True)
        server.run("streamable-http", host=args.host, port=args.http)
    return 0


if __name__ == "__main__":
    sys.exit(main())
