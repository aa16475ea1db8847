"""A server store never confirms a commit the server has not flushed: a database (or role, or server) set to
``synchronous_commit = off`` answers COMMIT before its WAL reaches disk, and a crash of the server's process
then loses rows Sentinel had reported written (an audit row the call was forwarded on). The store's
connections raise ``off`` to ``on``; a setting that flushes locally first (``local``, ``remote_apply``) is
the server's choice and kept."""

from __future__ import annotations

import psycopg
import pytest

from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.open import release


@pytest.mark.parametrize("configured, want",
                         [("off", "on"), ("local", "local"), ("remote_apply", "remote_apply")])
async def test_the_writers_commits_are_flushed_whatever_the_database_says(
    pg_url: str, configured: str, want: str
) -> None:
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {psycopg.sql.Identifier(pg_url.rsplit('/', 1)[1]).as_string(admin)} "
                      f"SET synchronous_commit = {configured}")
    db = open_database(pg_url, "flushed")
    try:
        await db.write("CREATE TABLE t (s TEXT)")
        # read on the writer's own connection, in the transaction its rows commit in
        await db.write("INSERT INTO t (s) SELECT pg_catalog.current_setting('synchronous_commit')")
        assert await db.query("SELECT s FROM t") == [(want,)]
        assert await db.query("SHOW synchronous_commit") == [(want,)]  # a reader's connection
    finally:
        await release(db)
