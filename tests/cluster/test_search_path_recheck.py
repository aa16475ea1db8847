"""The store's search path is checked again on every new connection, not once per process (red team
"config11"). A schema of the path made writable by another role AFTER Sentinel started (``GRANT CREATE ON
SCHEMA public TO analyst``) was never seen: the path checked at the first connection was pinned on every
reconnect, and that role could plant a function of a closer argument type there (CVE-2018-1058) or objects
named like Sentinel's. A new connection now re-runs the check of the pinned schemas (one catalog query: a
connection is opened rarely, by a pool or a reconnect) and refuses the store, naming the schema and role."""

from __future__ import annotations

import psycopg
import pytest

from sentinel_mcp.storage import search_path
from sentinel_mcp.storage.local_server import LocalServer
from sentinel_mcp.storage.search_path import UntrustedSearchPath
from tests.cluster.test_schema_shadowing import Roles

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def roles(pg_server: LocalServer) -> Roles:
    return Roles(pg_server)


def _pinned(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        search_path.pin(conn, url)


@pytest.mark.parametrize("grant", [
    'GRANT CREATE ON SCHEMA public TO "{other}"',
    "GRANT CREATE ON SCHEMA public TO PUBLIC",
    'ALTER SCHEMA public OWNER TO "{other}"',
    'CREATE TABLE public.planted (x int); ALTER TABLE public.planted OWNER TO "{other}"',
])
def test_a_schema_made_another_roles_after_the_first_connection_refuses_the_next(roles: Roles,
                                                                                grant: str) -> None:
    url = roles.url(roles.sentinel)
    _pinned(url)  # the first connection: checked, pinned
    _pinned(url)  # a reconnect while nothing changed: fine
    with psycopg.connect(roles.admin, autocommit=True) as admin:
        for statement in grant.format(other=roles.other).split("; "):
            admin.execute(statement)
    with pytest.raises(UntrustedSearchPath) as refused:
        _pinned(url)
    assert "public" in str(refused.value) and "search path" in str(refused.value)


def test_a_later_fix_is_taken_by_the_next_connection(roles: Roles) -> None:
    url = roles.url(roles.sentinel)
    _pinned(url)
    with psycopg.connect(roles.admin, autocommit=True) as admin:
        admin.execute(f'GRANT CREATE ON SCHEMA public TO "{roles.other}"')
        with pytest.raises(UntrustedSearchPath):
            _pinned(url)
        admin.execute(f'REVOKE CREATE ON SCHEMA public FROM "{roles.other}"')
    _pinned(url)
