"""The command line every example domain server shares: stdio by default, or streamable HTTP at /mcp.

    python -m examples.<domain>                  # stdio
    python -m examples.<domain> --http PORT      # http://127.0.0.1:PORT/mcp
    python -m examples.<domain> --permissive     # write tools that check nothing (for policy tests)
    <DOMAIN>_DB=/path/db.json python -m examples.<domain>

Each domain's ``__main__`` names itself and hands over how to load its database and build its server; a
database that cannot be loaded is said on stderr, prefixed with the domain, with exit status 2.
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Domain:
    name: str  # "airline": the prog name, the stderr prefix
    description: str
    db_env_var: str
    load: Callable[[str | None], Any]  # a path (None: $<db_env_var>, else the bundled copy) -> the database
    load_error: type[Exception]  # what ``load`` raises for a database it cannot use
    create_server: Callable[..., Any]  # (database, *, permissive) -> an MCPServer


def parse_args(domain: Domain, argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=f"python -m examples.{domain.name}", description=domain.description)
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP at /mcp on this port")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    parser.add_argument("--permissive", action="store_true",
                        help="write tools check nothing (to test what a policy enforces by itself)")
    parser.add_argument(
        "--db", help=f"db.json to load (default ${domain.db_env_var}, else the bundled pristine copy)"
    )
    return parser.parse_args(argv)


def main(domain: Domain, argv: list[str] | None = None) -> int:
    args = parse_args(domain, argv)
    try:
        database = domain.load(args.db)
    except domain.load_error as exc:
        print(f"{domain.name}: {exc}", file=sys.stderr, flush=True)
        return 2
    if args.http is None and not sys.stderr.isatty():
        # spawned by a client (Sentinel's embedded default among them), stderr a pipe: plain log lines. Left
        # to itself the SDK imports rich to format them for a terminal (and drops that handler when logging is
        # set up already): 0.1 s of this server's 0.9 s start, on the path to the gateway's first tools/list
        # (issue 21). In a terminal the SDK's own set-up runs.
        from mcp.server.mcpserver import server as sdk_server

        logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                            format="%(levelname)s %(name)s: %(message)s")
        sdk_server.configure_logging = lambda level="INFO": None  # type: ignore[assignment]
    server = domain.create_server(database, permissive=args.permissive)
    if args.http is None:
        server.run("stdio")
    else:
        print(f"{domain.name}: serving http://{args.host}:{args.http}/mcp", file=sys.stderr, flush=True)
        server.run("streamable-http", host=args.host, port=args.http)
    return 0
