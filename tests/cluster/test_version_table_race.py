"""Replicas starting at once on a fresh database each make the table of the stores' versions
(``server_serving.version_table``): ``CREATE TABLE IF NOT EXISTS`` is not safe against itself (two sessions
both see no table, and the second's insert into PostgreSQL's catalog fails: "duplicate key value violates
unique constraint pg_type_typname_nsp_index"). A replica of a cluster's first start then exited (CI: three
replicas of ``test_write_turns_replicas.py`` and two of ``test_replicas.py``, on a loaded machine). The table
is made under one advisory lock now: every starter gets it, none fails. Real PostgreSQL; many starters held
at one barrier."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from sentinel_mcp.storage.search_path import pin
from sentinel_mcp.storage.server_serving import version_table

STARTERS = 12
ROUNDS = 6


def _start(url: str, barrier: threading.Barrier, out: list[Any]) -> None:
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True) as conn:
            pin(conn, url)
            barrier.wait(timeout=60)
            out.append(version_table(conn))
    except Exception as e:  # noqa: BLE001 - every starter's outcome is the test's result
        out.append(e)


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_replicas_making_the_version_table_at_once_all_start(pg_url: str, round_: int) -> None:
    barrier = threading.Barrier(STARTERS)
    out: list[Any] = []
    threads = [threading.Thread(target=_start, args=(pg_url, barrier, out)) for _ in range(STARTERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert out == [True] * STARTERS, [repr(o) for o in out if o is not True]
