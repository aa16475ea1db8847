"""A build's row on a server store (``tasks``) is signed over what binds it to its owner (id, principal,
conversation, backend, spec: ``swarm/build_rows.py``) by the replica that created it, and checked on every
read that hands a build to someone. A build's files are on its replica's disk under its id: before, anyone who
could write the database without the seal key could move bob's build to alice in SQL (``principal``), and
alice's console and ``swarm_status`` then showed her bob's build and its files; or plant builds under her
name. Such a row is now nobody's: not shown, not listed, not counted among her kept builds."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from sentinel_mcp.swarm.state import SwarmStore

KEY = b"s" * 32
TID = "t20261205-061500-b0b0b0"
OTHER = "t20261205-061501-a1a1a1"


def sql(url: str, text: str, params: tuple = ()) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(text, params)


async def _seen(url: str, principal: str, key: bytes = KEY) -> tuple[bool, list[str], bool, list[str]]:
    """What a replica of the cluster shows ``principal``: bob's build opened, listed, unfinished, ended."""
    async with SwarmStore(url, key=key) as store:
        got = await store.get_task(TID)
        opened = got is not None and got.get("principal") == principal
        listed = [t["task_id"] for t in await store.list_tasks(20, principal)]
        unfinished = await store.unfinished_of(principal)
        ended = [tid for tid, *_ in await store.ended(principal)]
        return opened, listed, unfinished is not None and unfinished["task_id"] == TID, ended


async def _bobs_build(url: str, tmp: Path) -> None:
    async with SwarmStore(url, key=KEY) as store:
        assert await store.create_task(TID, {"app_name": "Bob's notes"}, tmp / TID, principal="bob",
                                       session="bob/s", lease=("replica-a", "replica-a/x", 600.0))


async def test_a_signed_build_is_its_owners_on_every_replica(pg_url: str, tmp_path: Path) -> None:
    await _bobs_build(pg_url, tmp_path)
    assert await _seen(pg_url, "bob") == (True, [TID], True, [])
    assert await _seen(pg_url, "alice") == (False, [], False, [])
    async with SwarmStore(pg_url, key=KEY) as store:  # as its runner ends it (the end signed)
        await store.set_state(TID, "COMPLETED")
    assert await _seen(pg_url, "bob") == (True, [TID], False, [TID])


ATTACKS = {
    "moved to alice": "UPDATE tasks SET principal = 'alice'",
    "moved, session too": "UPDATE tasks SET principal = 'alice', session = 'alice/s'",
    "spec edited": "UPDATE tasks SET principal = 'alice', spec_json = '{\"app_name\": \"Pay\"}'",
    "signature dropped": "UPDATE tasks SET principal = 'alice', mac = NULL",
    "planted": "INSERT INTO tasks (task_id, state, spec_json, session, principal, backend, workspace, "
               "created_at, updated_at, replica, lease_holder, lease_until) SELECT '" + OTHER + "', state, "
               "spec_json, 'alice/s', 'alice', backend, workspace, created_at, updated_at, replica, "
               "lease_holder, lease_until FROM tasks",
    "copied with its signature": "INSERT INTO tasks (task_id, state, spec_json, session, principal, backend, "
               "workspace, created_at, updated_at, replica, lease_holder, lease_until, mac) SELECT '" + OTHER
               + "', state, spec_json, session, 'alice', backend, workspace, created_at, updated_at, "
               "replica, lease_holder, lease_until, mac FROM tasks",
}


@pytest.mark.parametrize("attack", list(ATTACKS))
@pytest.mark.parametrize("ended", [False, True])
async def test_a_build_moved_or_planted_in_sql_is_nobodys(
    pg_url: str, tmp_path: Path, attack: str, ended: bool
) -> None:
    await _bobs_build(pg_url, tmp_path)
    if ended:
        sql(pg_url, "UPDATE tasks SET state = 'COMPLETED'")
    sql(pg_url, ATTACKS[attack])
    async with SwarmStore(pg_url, key=KEY) as store:
        assert await store.get_task(OTHER) is None
        alice = [t["task_id"] for t in await store.list_tasks(20, "alice")]
        assert alice == [] and await store.unfinished_of("alice") is None
        assert await store.ended("alice") == []
        everyone = [t["task_id"] for t in await store.list_tasks(20)]
        assert OTHER not in everyone
        if attack.startswith("moved") or attack.startswith("spec") or attack.startswith("signature"):
            assert await store.get_task(TID) is None and everyone == []


async def test_another_key_signs_nothing_the_cluster_reads(pg_url: str, tmp_path: Path) -> None:
    await _bobs_build(pg_url, tmp_path)
    assert await _seen(pg_url, "bob", key=b"x" * 32) == (False, [], False, [])
