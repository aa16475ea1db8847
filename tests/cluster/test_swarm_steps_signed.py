"""A build's accepted step records the SHA-256 of the file it wrote (``steps.sha256``), and what is served
(``swarm_read_file``, the console's file view) lets a file with a second name (a hard link) through only when
it holds exactly that digest. On a server store the step is signed (``swarm/build_rows.step_mac``: task id,
path, status, digest): before, a database writer without the seal key could set a step's digest to that of
another file of the replica's disk hard-linked into the workspace, and the build's principal was served it.
A step edited or planted in SQL now vouches for no digest (a hard-linked file is refused, as for a build from
before digests). Real PostgreSQL; the edits are plain SQL."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from sentinel_mcp.swarm.state import SwarmStore

pytestmark = pytest.mark.timeout(120)
KEY = b"p" * 32
TID = "t20261205-124500-d0d0d0"
REAL, OTHER = "a" * 64, "b" * 64


def sql(url: str, text: str, params: tuple = ()) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(text, params)


async def stepped(url: str, tmp: Path) -> SwarmStore:
    store = await SwarmStore(url, key=KEY).open()
    assert await store.create_task(TID, {"app_name": "n"}, tmp / TID, principal="bob",
                                   lease=("replica-a", "replica-a/x", 600.0))
    await store.record_step(TID, 1, 1, "src/app.py", "ACCEPTED", [], [], 10, sha256=REAL)
    return store


async def test_a_signed_step_vouches_for_its_digest(pg_url: str, tmp_path: Path) -> None:
    store = await stepped(pg_url, tmp_path)
    try:
        assert await store.written_sha256(TID, "src/app.py") == REAL
    finally:
        await store.close()


@pytest.mark.parametrize("edit", [
    "UPDATE steps SET sha256 = %s",  # the digest replaced
    "UPDATE steps SET sha256 = %s, file_path = 'src/app.py'",
])
async def test_a_digest_edited_in_sql_vouches_for_nothing(pg_url: str, tmp_path: Path, edit: str) -> None:
    store = await stepped(pg_url, tmp_path)
    try:
        sql(pg_url, edit, (OTHER,))
        assert await store.written_sha256(TID, "src/app.py") is None
    finally:
        await store.close()


async def test_a_step_planted_in_sql_vouches_for_nothing(pg_url: str, tmp_path: Path) -> None:
    store = await stepped(pg_url, tmp_path)
    try:
        # a newer step for another path, its MAC copied from the real one
        sql(pg_url, "INSERT INTO steps (task_id, step_number, attempt, file_path, status, bytes, sha256, "
                    "created_at, mac) SELECT task_id, 2, 1, 'src/secret.txt', 'ACCEPTED', 1, %s, "
                    "created_at, mac FROM steps", (OTHER,))
        assert await store.written_sha256(TID, "src/secret.txt") is None
        sql(pg_url, "INSERT INTO steps (task_id, step_number, attempt, file_path, status, bytes, sha256, "
                    "created_at, mac) SELECT task_id, 2, 1, file_path, 'ACCEPTED', 1, %s, created_at, NULL "
                    "FROM steps WHERE step_number = 1", (OTHER,))
        assert await store.written_sha256(TID, "src/app.py") is None  # the newest step for it: not signed
    finally:
        await store.close()


async def test_an_embedded_store_reads_digests_as_before(tmp_path: Path) -> None:
    store = await SwarmStore(tmp_path / "swarm.db").open()
    try:
        assert await store.create_task(TID, {"app_name": "n"}, tmp_path / TID, principal="bob")
        await store.record_step(TID, 1, 1, "src/app.py", "ACCEPTED", [], [], 10, sha256=REAL)
        assert await store.written_sha256(TID, "src/app.py") == REAL
    finally:
        await store.close()
