"""The stores that live on a PostgreSQL server, and the start-up check of a serving role against them.

A gateway whose role serves (``storage/server_serving.py``: it does not own the schema) checks, before it
opens anything, that every store's schema is at this Sentinel's version: one behind refuses the start, naming
``sentinel-mcp db migrate``. Checked at start for all of them, not as each store opens: stores open lazily and
one failing then only degrades (calls refused until it recovers), which a schema behind never does by itself.
"""

from __future__ import annotations

import importlib
from typing import Any

# every store that has a PostgreSQL schema: (module, its Schema's name). Imported only when migrating
# (``tests/cluster/test_serving_role.py`` keeps this equal to the stores the tree defines)
SERVER_STORES: tuple[tuple[str, str], ...] = (
    ("sentinel_mcp.gateway.audit_schema", "SCHEMA"),
    ("sentinel_mcp.gateway.consents", "SCHEMA"),
    ("sentinel_mcp.gateway.stored_nonces", "SCHEMA"),
    ("sentinel_mcp.gateway.cluster_key_check", "SCHEMA"),
    ("sentinel_mcp.gateway.shared_asked_questions", "SCHEMA"),
    ("sentinel_mcp.gateway.replica_name_lease", "SCHEMA"),
    ("sentinel_mcp.policy.confirmation_book", "SCHEMA"),
    ("sentinel_mcp.policy.shared_rulebases", "SCHEMA"),
    ("sentinel_mcp.policy.fact_schema", "STORE_SCHEMA"),
    ("sentinel_mcp.agent.trace_store", "SCHEMA"),
    ("sentinel_mcp.search.shared_index", "SCHEMA"),
    ("sentinel_mcp.storage.server_turn", "SCHEMA"),
    ("sentinel_mcp.storage.conversation_names", "SCHEMA"),
    ("sentinel_mcp.a2a.task_journal", "SCHEMA"),
    ("sentinel_mcp.a2a.shared_message_ids", "SCHEMA"),
    ("sentinel_mcp.a2a.shared_offers", "SCHEMA"),
    ("sentinel_mcp.a2a.assist_inbox", "SCHEMA"),
    ("sentinel_mcp.swarm.state", "SCHEMA"),
    ("sentinel_mcp.console.cluster_inbox", "SCHEMA"),
    ("device_tools.sensors.database", "STORE_SCHEMA"),
)


def server_schemas() -> list[Any]:
    return [getattr(importlib.import_module(module), name) for module, name in SERVER_STORES]


async def check_serving(url: str) -> None:
    """``refuse_behind`` within a bound: a server that answers nothing (stalled) leaves the start to the
    stores, which fail closed on their own (a serving role's store behind never opens: ``server_schema``)."""
    import anyio

    from sentinel_mcp.storage.postgres import CONNECT_TIMEOUT, STATEMENT_TIMEOUT

    with anyio.move_on_after(CONNECT_TIMEOUT + STATEMENT_TIMEOUT):
        await anyio.to_thread.run_sync(refuse_behind, url, abandon_on_cancel=True)


def refuse_behind(url: str) -> None:
    """``SchemaBehind`` when this URL's role serves and a store's schema is behind this Sentinel's. A server
    that cannot be reached now passes: the stores report it as they open (degraded, as before)."""
    import psycopg

    from sentinel_mcp.storage.database import StorageError
    from sentinel_mcp.storage.location import server_location
    from sentinel_mcp.storage.postgres import CONNECT_TIMEOUT, STATEMENT_TIMEOUT
    from sentinel_mcp.storage.search_path import pin
    from sentinel_mcp.storage.server_schema import serving_current
    from sentinel_mcp.storage.server_session import session_settings
    from sentinel_mcp.storage.server_transport import check

    where = server_location(url)
    check(where)
    try:
        conn = psycopg.connect(where.dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.OperationalError:
        return
    with conn:
        try:
            pin(conn, where.dsn)
            session_settings(conn, STATEMENT_TIMEOUT)  # bounded, as every connection of the store
            serving_current(conn, server_schemas)
        except psycopg.OperationalError:  # the server went (or stalled) meanwhile: the stores say it
            return
        except psycopg.Error as e:  # a grant missing (a table the serving role may not read): said, refused
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            hint = ("; give this role what serving needs: sentinel-mcp db grants <role> --apply, as the owner"
                    if isinstance(e, psycopg.errors.InsufficientPrivilege) else "")
            raise StorageError(where.scrub(f"store {where.redacted}: {first}{hint}")) from None
