"""A database split into an owner role and a serving role on the tests' PostgreSQL server
(``docs/cluster.md``, "Least privilege"): the ``split`` fixture (``conftest.py``) and the serving role's
connection."""

from __future__ import annotations

import subprocess
import sys

import psycopg

from sentinel_mcp.storage.local_server import LocalServer
from tests.support.cli_in_process import run_main
import uuid


class Split:
    """A database owned by ``owner``; ``server``: a plain LOGIN role, to be granted what serving needs."""

    def __init__(self, server: LocalServer) -> None:
        tag = uuid.uuid4().hex[:8]
        self.owner, self.server, self.db = f"owner_{tag}", f"serving_{tag}", f"split_{tag}"
        self.port = server.port
        with psycopg.connect(server.url, autocommit=True) as conn:
            conn.execute(f'CREATE ROLE "{self.owner}" LOGIN')
            conn.execute(f'CREATE ROLE "{self.server}" LOGIN')
            conn.execute(f'CREATE DATABASE "{self.db}" OWNER "{self.owner}"')

    def url(self, role: str) -> str:
        return f"postgresql://{role}@127.0.0.1:{self.port}/{self.db}"

    def db_cli(self, *args: str, process: bool = False) -> subprocess.CompletedProcess[str]:
        """``sentinel-mcp db ARGS`` as the owner: the CLI's ``main`` in this process (a subprocess paid ~4 s
        of CPU for the imports of every store's schema, twice a test), or with ``process`` a real one."""
        argv = ["db", *args, "--url", self.url(self.owner)]
        if not process:
            return run_main(argv)
        return subprocess.run([sys.executable, "-m", "sentinel_mcp", *argv], capture_output=True, text=True,
                              timeout=120)

    def migrate_and_grant(self, process: bool = False) -> None:
        done = self.db_cli("migrate", process=process)
        assert done.returncode == 0, done.stderr[-3000:]
        done = self.db_cli("grants", self.server, "--apply", process=process)
        assert done.returncode == 0, done.stderr[-3000:]

    def tables(self) -> list[str]:
        with psycopg.connect(self.url("postgres")) as conn:
            return [r[0] for r in conn.execute(
                "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' "
                "ORDER BY 1").fetchall()]

    def versions(self) -> dict[str, int]:
        with psycopg.connect(self.url(self.owner)) as conn:
            return dict(conn.execute("SELECT store, version FROM storage_schema").fetchall())


def serving(split: Split) -> psycopg.Connection:
    conn = psycopg.connect(split.url(split.server), autocommit=True)
    conn.execute('SET search_path = "public", pg_temp')  # as the gateway pins it
    return conn
