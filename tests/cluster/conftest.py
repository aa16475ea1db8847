"""A real PostgreSQL for the cluster tests: one throwaway server per test session (in a temporary directory,
as the ``postgres`` user when run as root), a fresh database per test. Not installed means FAILED, never
skipped: ``make system`` installs it, and a cluster feature untested is a defect."""

from __future__ import annotations

import itertools
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest

from sentinel_mcp.storage.local_server import LocalServer, free_port

_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[LocalServer]:
    root = Path(tempfile.mkdtemp(prefix="sentinel-pg-"))
    server = LocalServer(root / "pg", free_port())
    try:
        server.init().start()  # ServerUnavailable (not installed) fails the tests that need it
        yield server
    finally:
        server.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: LocalServer) -> str:
    """A new empty database on the session's server."""
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
