"""The settings every connection to a server store runs under, set as it opens.

- ``statement_timeout``: each statement ends within ``sentinel.cluster.commit_wait_seconds`` (the server
  cancels it: a fault, so the call fails closed and the store shows degraded).
- ``synchronous_commit`` at least flushed locally: ``off`` (a server's, database's or role's default) answers
  COMMIT before the WAL is on disk, so a crash of the server's process loses rows Sentinel has reported
  written (the audit row a call was forwarded on). ``off`` is raised to ``on``; every other value flushes
  locally first and is the server's choice (``local``, or waiting for a standby), kept.
"""

from __future__ import annotations

from typing import Any

_FLUSHED = ("SELECT pg_catalog.set_config('synchronous_commit', 'on', false) "
            "WHERE pg_catalog.current_setting('synchronous_commit') = 'off'")


def session_settings(conn: Any, statement_seconds: float) -> None:
    conn.execute(f"SET statement_timeout = {int(statement_seconds * 1000)}")
    conn.execute(_FLUSHED)
    if not conn.autocommit:
        conn.commit()
