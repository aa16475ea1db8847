"""``sentinel-mcp db``: a PostgreSQL store under least privilege (``storage/server_serving.py``).

``migrate`` applies every store's migrations as the owner role (the one that owns the database and its
schema); ``grants ROLE`` prints (``--apply``: runs) what a serving role is granted
(``storage/server_grants.py``). Gateways then run with the serving role's URL in ``sentinel.store``: they
send no DDL, and one whose schema is behind refuses to start, naming ``migrate``. The owner's URL is given
with ``--url`` or, to keep a password off the command line, ``SENTINEL_DB_OWNER_URL`` (``${VAR}`` in it is
expanded as in ``sentinel.store``).
"""

from __future__ import annotations

import argparse
import os
import sys
from sentinel_mcp.app.server_stores import SERVER_STORES, server_schemas
from sentinel_mcp.core.display_text import safe_text

OWNER_URL = "SENTINEL_DB_OWNER_URL"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("db", help="a PostgreSQL store under least privilege: migrate as the owner, grant a "
                       "serving role")
    dsub = p.add_subparsers(dest="action", metavar="ACTION")
    m = dsub.add_parser("migrate", help="apply every store's migrations as the owner role")
    m.add_argument("--url", help=f"the owner role's postgresql:// URL (default: ${OWNER_URL})")
    m.set_defaults(func=cmd_migrate)
    g = dsub.add_parser("grants", help="what a serving role is granted (printed; --apply runs it)")
    g.add_argument("role", help="the serving role (a plain LOGIN role, not a member of the owner)")
    g.add_argument("--url", help=f"the owner role's postgresql:// URL (default: ${OWNER_URL})")
    g.add_argument("--apply", action="store_true", help="run the statements (in one transaction)")
    g.set_defaults(func=cmd_grants)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _owner_url(args: argparse.Namespace) -> str:
    from sentinel_mcp.storage.location import is_server_url

    url = args.url or os.environ.get(OWNER_URL, "")
    if not is_server_url(url):
        raise SystemExit(f"sentinel-mcp db: give the owner role's postgresql:// URL (--url or ${OWNER_URL})")
    return url


def cmd_migrate(args: argparse.Namespace) -> int:
    from sentinel_mcp.storage.database import StorageError
    from sentinel_mcp.storage.open import open_database, release_blocking

    url = _owner_url(args)
    db = open_database(url, "migrate")
    try:
        for schema in server_schemas():
            db.migrate_blocking(schema)
    except StorageError as e:
        print(f"sentinel-mcp db migrate: {safe_text(str(e), 2_000)}", file=sys.stderr)
        return 1
    finally:
        release_blocking(db)
    print(f"migrated {len(SERVER_STORES)} stores at {safe_text(db.path, 400)}")
    return 0


def cmd_grants(args: argparse.Namespace) -> int:
    import psycopg

    from sentinel_mcp.storage.database import StorageError
    from sentinel_mcp.storage.location import server_location
    from sentinel_mcp.storage.search_path import pin
    from sentinel_mcp.storage.server_grants import apply_grants, grant_script
    from sentinel_mcp.storage.server_transport import check

    where = server_location(_owner_url(args))
    check(where)
    try:
        with psycopg.connect(where.dsn, autocommit=True) as conn:
            pin(conn, where.dsn)  # the schema Sentinel's names resolve to, as the gateway's
            statements = grant_script(conn, args.role)
            if args.apply:
                apply_grants(conn, statements)
    except (StorageError, psycopg.Error) as e:
        print(f"sentinel-mcp db grants: {safe_text(where.scrub(str(e)), 2_000)}", file=sys.stderr)
        return 1
    print("\n".join(st + ";" for st in statements))
    return 0
