"""While the shared store is degraded a read on a call's way fails at once with the cause, instead of waiting
on the read pool: the pool backs off its reconnects while PostgreSQL is down, so a read waiting for a pooled
connection waited its whole timeout (seconds) on every fresh call's inbox take, past the balancer's patience
(tests/cluster/test_outage_under_load.py). The waits are told by events: the pool's count of requests that
queued for a connection, and which of two reads ends first; never by a measured duration."""

from __future__ import annotations

import asyncio
import shutil
import socket
import tempfile
import threading
from pathlib import Path
from typing import AsyncIterator, Iterator

import pytest

from sentinel_mcp.console.cluster_inbox import SCHEMA, ClusterInbox
from sentinel_mcp.console.inbox import Inbox
from sentinel_mcp.storage import StorageError, open_database, postgres
from sentinel_mcp.storage.local_server import LocalServer
from tests.conftest import free_port
from sentinel_mcp.storage.location import server_location
from sentinel_mcp.storage.postgres import READERS
from sentinel_mcp.storage.open import release
from tests.cluster.test_inbox_flags_written_by_others import KEY, YES, post, take

pytestmark = pytest.mark.timeout(120)
HANG = 30  # a bound on the test, not a measurement


@pytest.fixture
async def server() -> AsyncIterator[LocalServer]:
    root = Path(tempfile.mkdtemp(prefix="sentinel-pg-down-"))
    srv = LocalServer(root / "pg", free_port())
    try:
        await asyncio.to_thread(lambda: srv.init().start())
        yield srv
    finally:
        await asyncio.to_thread(srv.stop, "immediate")
        shutil.rmtree(root, ignore_errors=True)


def queued(db: postgres.PostgresDatabase) -> int:
    """Reads that waited on the pool for a connection, since the store opened."""
    return int(db._pool.get_stats().get("requests_queued", 0))


async def test_the_inbox_take_while_postgres_is_down_refuses_at_once_and_the_answer_waits(
    server: LocalServer,
) -> None:
    inbox = Inbox()
    shared = ClusterInbox(inbox, server.url, "replica-a", key=KEY)
    shared.db = open_database(server.url, "inbox")  # no polling loop: the reads counted are the take's own
    await shared.db.migrate(SCHEMA)
    inbox.shared = shared
    try:
        item = post(inbox, "kept")
        assert await inbox.give(item, YES)  # the person's "yes", waiting for the call's retry
        await asyncio.to_thread(server.stop, "immediate")
        assert not await shared.db.probe()  # the store knows it is down (a call is refused from here)
        before = queued(shared.db)
        for _ in range(3):
            assert await asyncio.wait_for(take(inbox, "kept"), HANG) is None  # fail closed: not used
            with pytest.raises(StorageError, match="Connection refused|connection failed"):
                await asyncio.wait_for(shared.db.query("SELECT 1"), HANG)
        assert queued(shared.db) == before  # no read waited on the pool while the server was down

        await asyncio.to_thread(server.start)
        for _ in range(100):  # bounded: back once a write goes through
            if await shared.db.probe():
                break
            await asyncio.sleep(0.1)
        assert await take(inbox, "kept") == YES  # the answer outlived the outage, used once
        assert await take(inbox, "kept") is None
    finally:
        inbox.shared = None
        await release(shared.db)


@pytest.fixture
def silent_server() -> Iterator[tuple[int, list[socket.socket]]]:
    """A port that accepts connections and never answers (a server host that stopped answering)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], accepted
    finally:
        listener.close()
        for s in accepted:
            s.close()


async def test_while_degraded_one_connection_tries_the_server_and_the_other_reads_share_its_word(
    silent_server: tuple[int, list[socket.socket]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server host that stopped answering: each read used to wait the pool's timeout and then its own
    connect timeout, one after the other on the few reader threads. Now the reads that come while one
    connection is trying the server end with its word (one connection reaches the host, not one per read)."""
    port, accepted = silent_server
    monkeypatch.setattr(postgres, "CONNECT_TIMEOUT", 2)  # libpq's least
    db = postgres.PostgresDatabase(server_location(f"postgresql://postgres@127.0.0.1:{port}/x"), "silent")
    db.start()
    try:
        assert not await db.probe()  # the writer's connection attempt timed out: degraded
        tried = len(accepted)
        first = asyncio.ensure_future(db.query("SELECT 1"))  # tries the server: no answer until its timeout
        for _ in range(200):  # bounded: until its connection reached the server
            if len(accepted) > tried:
                break
            await asyncio.sleep(0.01)
        assert len(accepted) == tried + 1
        others = [db.query("SELECT 1") for _ in range(READERS * 2)]
        others.append(asyncio.to_thread(db.query_blocking, "SELECT 1"))  # a blocking caller's read too
        ended = await asyncio.wait_for(asyncio.gather(first, *others, return_exceptions=True), HANG)
        assert all(isinstance(e, StorageError) and "silent store" in str(e) for e in ended), ended
        assert len(accepted) == tried + 1  # one connection tried the server for all of them
        assert queued(db) == 0
    finally:
        await db.close()
