"""A swarm build's lease is signed on a server store (``swarm/build_rows.lease_mac``: id, replica, holder,
lease_until), by its runner at creation and at every renewal. Before, a database writer without the seal key
could move a running build's lease (to another replica's name, or make it lapse) in SQL: a sweeper then ended
the build and signed its end, so the retention sweep on its replica deleted its files; or the runner, finding
another holder, took its build for ended elsewhere and stopped it. Now a sweeper signs the end of a signed
lease only (a forged one ends the build, unsigned: its files kept, said), and a runner takes back a lease
moved under it. Real PostgreSQL, real directories; the edits are plain SQL."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import psycopg
import pytest

from sentinel_mcp.swarm import build_lease
from sentinel_mcp.swarm.retention import DAY, sweep
from sentinel_mcp.swarm.settings import SwarmSettings
from sentinel_mcp.swarm.state import SwarmStore

pytestmark = pytest.mark.timeout(120)
KEY = b"l" * 32
TID = "t20261205-121500-c0c0c0"
HOLDER = "replica-a/aaaa"


def sql(url: str, text: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(text, params)
        return cur.fetchall() if cur.description else []


async def build(url: str, root: Path, lease: float = 600.0) -> Path:
    ws = root / TID
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('bob')\n")
    async with SwarmStore(url, key=KEY) as store:
        assert await store.create_task(TID, {"app_name": "Bob's notes"}, ws, principal="bob", session="bob/s",
                                       lease=("replica-a", HOLDER, lease))
    return ws


async def swept(url: str, root: Path) -> list[str]:
    """What the sweep on the build's replica removes eight days from now (past the FAILED builds' days)."""
    async with SwarmStore(url, key=KEY) as store:
        report = await sweep(root, store, SwarmSettings(), now=time.time() + 8 * DAY)
    return report.workspaces + report.trimmed


FORGED = {
    # the lease made to lapse (a sweeper cannot tell it from a dead replica)
    "set to lapse": "UPDATE tasks SET lease_until = 0",
    "lapse, mac wiped": "UPDATE tasks SET lease_until = 0, lease_mac = NULL",
    "lapse, another build's mac": "UPDATE tasks SET lease_until = 0, lease_mac = 'ab' || lease_mac",
    # moved to another holder and replica, then lapsed
    "moved and lapsed": "UPDATE tasks SET replica = 'replica-b', lease_holder = 'replica-b/bbbb', "
                        "lease_until = 0",
}


@pytest.mark.parametrize("forged", sorted(FORGED))
async def test_a_lapse_forged_in_sql_ends_the_build_but_never_sweeps_its_files(
    pg_url: str, tmp_path: Path, forged: str, caplog: pytest.LogCaptureFixture
) -> None:
    ws = await build(pg_url, tmp_path)
    sql(pg_url, FORGED[forged])
    async with SwarmStore(pg_url, key=KEY) as store:
        with caplog.at_level(logging.WARNING):
            assert [t for t, _ in await build_lease.end_lapsed(store.db, key=store.key)] == [TID]
        assert (await store.get_task(TID))["state"] == "FAILED"
        assert await store.ended("bob") == []  # no signed end: not counted among bob's kept builds
    assert "without a signed end" in caplog.text and TID in caplog.text
    assert await swept(pg_url, tmp_path) == [] and (ws / "src" / "app.py").exists()


async def test_a_build_moved_to_a_restarting_replicas_name_is_ended_unsigned(pg_url: str,
                                                                           tmp_path: Path) -> None:
    """replica-b, restarting, ends "its own" old builds at once: one moved to its name in SQL is ended (it
    cannot tell), never with a signed end."""
    ws = await build(pg_url, tmp_path)
    sql(pg_url, "UPDATE tasks SET replica = 'replica-b', lease_holder = 'replica-b/old'")
    async with SwarmStore(pg_url, key=KEY) as store:
        assert await build_lease.end_own_old(store.db, "replica-b", "replica-b/new", key=store.key) == [TID]
    assert await swept(pg_url, tmp_path) == [] and ws.is_dir()


async def test_a_lease_that_lapsed_as_signed_is_ended_signed(pg_url: str, tmp_path: Path) -> None:
    """A dead replica's build (its last renewal signed, then nothing): ended, its end signed, swept past its
    days as before. The renewal's own signature counts, not only the creation's."""
    ws = await build(pg_url, tmp_path)
    async with SwarmStore(pg_url, key=KEY) as store:
        # its last renewal, as its runner signs it (a lease that then lapsed at once)
        assert await build_lease.renew(store.db, [TID], HOLDER, -1.0, key=store.key) == {TID}
        assert [t for t, _ in await build_lease.end_lapsed(store.db, key=store.key)] == [TID]
        assert [t for t, *_ in await store.ended("bob")] == [TID]
    assert await swept(pg_url, tmp_path) == [TID] and not ws.exists()


async def test_a_restarted_replica_ends_its_own_signed_build_signed(pg_url: str, tmp_path: Path) -> None:
    ws = await build(pg_url, tmp_path)
    async with SwarmStore(pg_url, key=KEY) as store:
        assert await build_lease.end_own_old(store.db, "replica-a", "replica-a/new", key=store.key) == [TID]
    assert await swept(pg_url, tmp_path) == [TID] and not ws.exists()


@pytest.mark.parametrize("moved", [
    "UPDATE tasks SET lease_holder = 'replica-b/bbbb'",
    "UPDATE tasks SET replica = 'replica-b', lease_holder = 'replica-b/bbbb'",
    "UPDATE tasks SET lease_holder = ''",
])
async def test_a_lease_moved_under_its_runner_is_taken_back(
    pg_url: str, tmp_path: Path, moved: str, caplog: pytest.LogCaptureFixture
) -> None:
    """No replica moves a running build's lease (a sweeper ends the build): one moved in SQL is taken back at
    the runner's next renewal, signed and said, and the build goes on (before: taken for lost, stopped)."""
    await build(pg_url, tmp_path)
    sql(pg_url, moved)
    async with SwarmStore(pg_url, key=KEY) as store:
        with caplog.at_level(logging.WARNING):
            assert await build_lease.renew(store.db, [TID], HOLDER, 600.0, key=store.key) == {TID}
        task = await store.get_task(TID)
        assert (task["state"], task["lease_holder"], task["replica"]) == ("PLANNING", HOLDER, "replica-a")
        # and its lease is signed again: a later lapse (a dead runner) is ended signed
        assert await build_lease.renew(store.db, [TID], HOLDER, -1.0, key=store.key) == {TID}
        assert [t for t, _ in await build_lease.end_lapsed(store.db, key=store.key)] == [TID]
        assert [t for t, *_ in await store.ended("bob")] == [TID]
    assert "taken back" in caplog.text


async def test_a_build_ended_elsewhere_is_still_lost_to_its_runner(pg_url: str, tmp_path: Path) -> None:
    await build(pg_url, tmp_path, lease=-1.0)
    async with SwarmStore(pg_url, key=KEY) as store:
        assert [t for t, _ in await build_lease.end_lapsed(store.db, key=store.key)] == [TID]
        assert await build_lease.renew(store.db, [TID], HOLDER, 600.0, key=store.key) == set()
        assert (await store.get_task(TID))["state"] == "FAILED"


@pytest.mark.parametrize("how", ["lapsed", "restarted"])
async def test_no_reader_ever_sees_a_sweepers_end_before_its_signature(
    pg_url: str, tmp_path: Path, how: str
) -> None:
    """A sweeper's end and its signature are one write: every row version the database ever held with the
    build ended carries its end's signature (a trigger records each). Before, the end was written, then signed
    in a second transaction: a status read between showed the end and its reason withheld as unverified (seen
    in a full run under load)."""
    await build(pg_url, tmp_path)
    sql(pg_url, "CREATE TABLE seen (state TEXT, signed BOOLEAN, reason_signed BOOLEAN)")
    sql(pg_url, "CREATE FUNCTION note_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO seen "
                "VALUES (NEW.state, NEW.end_mac IS NOT NULL, NEW.error_mac IS NOT NULL); RETURN NEW; END $$")
    sql(pg_url, "CREATE TRIGGER note AFTER UPDATE ON tasks FOR EACH ROW EXECUTE FUNCTION note_row()")
    async with SwarmStore(pg_url, key=KEY) as store:
        assert await build_lease.renew(store.db, [TID], HOLDER, -1.0, key=store.key) == {TID}
        if how == "lapsed":
            assert [t for t, _ in await build_lease.end_lapsed(store.db, key=store.key)] == [TID]
        else:
            ended = await build_lease.end_own_old(store.db, "replica-a", "replica-a/new", key=store.key)
            assert ended == [TID]
        task = await store.get_task(TID)
        assert task["state"] == "FAILED" and task["error"].startswith("interrupted: replica replica-a ")
        assert "unverified" not in task
    ended = sql(pg_url, "SELECT signed, reason_signed FROM seen WHERE state = 'FAILED'")
    assert ended and all(signed and reason for signed, reason in ended), ended


async def test_a_lease_renewed_after_the_sweeper_read_it_is_not_ended(pg_url: str, tmp_path: Path) -> None:
    """The sweeper ends a build on its lease exactly as it read it: a renewal that lands between the read and
    the end keeps the build running (its runner alive after all)."""
    await build(pg_url, tmp_path)
    async with SwarmStore(pg_url, key=KEY) as store:
        assert await build_lease.renew(store.db, [TID], HOLDER, -1.0, key=store.key) == {TID}
        read = await store.db.query(build_lease._READ + "WHERE task_id = ?", (TID,))
        assert await build_lease.renew(store.db, [TID], HOLDER, 600.0, key=store.key) == {TID}
        assert await build_lease._end(store.db, store.key, read, "stopped") == []
        assert (await store.get_task(TID))["state"] == "PLANNING"
        assert await build_lease.renew(store.db, [TID], HOLDER, 600.0, key=store.key) == {TID}
