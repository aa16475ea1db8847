"""The bound on a server store's statements and commits is ``sentinel.cluster.commit_wait_seconds`` (it was a
fixed 15 s in the code): one value outside its range (or of the wrong type) refuses the config, naming the
file, the line and the problem; one inside it is what the replica's connections are given (the server's own
``statement_timeout``, read back from a connection the store opened)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from sentinel_mcp.config import ConfigError, load_config
from sentinel_mcp.gateway.replica import shared_store
from sentinel_mcp.storage import open_database, postgres
from sentinel_mcp.storage.open import release

SEAL = "seal key for the commit wait tests, 32+ chars"


def _config(tmp: Path, url: str, wait: Any) -> Path:
    path = tmp / "config.json"
    # the setting on a line of its own, so its line is known: 5
    path.write_text('{"mcpServers": {},\n "sentinel": {"store": %s, "builtins": [],\n  "cluster": {\n'
                    '   "seal_key": %s,\n   "commit_wait_seconds": %s\n}}}\n'
                    % (json.dumps(url), json.dumps(SEAL), json.dumps(wait)))
    return path


@pytest.fixture
def bound_kept() -> Iterator[None]:
    """The bound is the process's: put back after each test."""
    before = postgres.STATEMENT_TIMEOUT
    yield
    postgres.set_statement_bound(before)


@pytest.mark.parametrize("wait", [0, 0.5, -3, 121, 1e9, "15", True, None, [15]])
def test_a_bound_out_of_range_or_not_a_number_refuses_the_config(
    tmp_path: Path, pg_url: str, wait: Any, bound_kept: None
) -> None:
    path = _config(tmp_path, pg_url, wait)
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    said = str(refused.value)
    assert str(path) in said and "sentinel.cluster.commit_wait_seconds" in said and "(line 5)" in said, said


async def test_the_bound_set_is_the_servers_statement_timeout_on_the_stores_connections(
    tmp_path: Path, pg_url: str, bound_kept: None
) -> None:
    config = load_config(_config(tmp_path, pg_url, 2.5))
    assert config.sentinel.cluster.commit_wait_seconds == 2.5
    shared, problems = shared_store(config)
    assert shared is not None and problems == []
    db = open_database(pg_url, "bound")
    try:
        await db.write("CREATE TABLE t (n INTEGER)")
        assert await db.query("SHOW statement_timeout") == [("2500ms",)]  # a reader's connection
        # the writer's connection (its own, opened for the write above)
        await db.write("INSERT INTO t (n) SELECT (pg_catalog.current_setting('statement_timeout')::interval "
                       "= interval '2.5 s')::int")
        assert await db.query("SELECT n FROM t") == [(1,)]
    finally:
        await release(db)


def test_the_default_is_fifteen_seconds(tmp_path: Path, pg_url: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"mcpServers": {}, "sentinel": {"store": pg_url, "builtins": []}}))
    assert load_config(path).sentinel.cluster.commit_wait_seconds == 15.0
