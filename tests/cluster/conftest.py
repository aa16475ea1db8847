"""A real PostgreSQL for the cluster tests: one throwaway server per test session (in a temporary directory,
as the ``postgres`` user when run as root), a fresh database per test. Not installed means FAILED, never
skipped: ``make system`` installs it, and a cluster feature untested is a defect.

The throwaway server does not flush to disk (``fsync`` and ``full_page_writes`` off): what they keep is a
commit across a crash of the machine, which no test makes and the directory does not outlive; every commit
the tests make, and each test's ``CREATE DATABASE``, waited on the disk (benchmarks/README.md, "Suite
time"). ``synchronous_commit`` stays on: a commit's WAL is written to the kernel before it returns, so a
server process killed keeps every commit it answered."""

from __future__ import annotations

import itertools
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest

from sentinel_mcp.storage.local_server import LocalServer
from tests.conftest import free_port

_numbers = itertools.count(1)
NO_FLUSH = "\nfsync = off\nfull_page_writes = off\n"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[LocalServer]:
    root = Path(tempfile.mkdtemp(prefix="sentinel-pg-"))
    server = LocalServer(root / "pg", free_port())
    try:
        server.init()  # ServerUnavailable (not installed) fails the tests that need it
        with open(server.data / "postgresql.conf", "a") as conf:
            conf.write(NO_FLUSH)
        server.start()
        yield server
    finally:
        server.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: LocalServer) -> str:
    """A new empty database on the session's server."""
    return new_database(pg_server)


def new_database(pg_server: LocalServer) -> str:
    """A new empty database on ``pg_server``: its URL (for a fixture of wider scope than ``pg_url``'s)."""
    import psycopg

    name = f"t{next(_numbers)}_{free_port()}"
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql://postgres@127.0.0.1:{pg_server.port}/{name}"


@pytest.fixture(params=["sqlite", "postgres"])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each backend in turn: a SQLite file, a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    return request.getfixturevalue("pg_url")


@pytest.fixture
def split(pg_server: LocalServer) -> Any:
    """A database owned by an owner role, and a plain serving role (``split_roles.Split``)."""
    from tests.cluster.split_roles import Split

    return Split(pg_server)
