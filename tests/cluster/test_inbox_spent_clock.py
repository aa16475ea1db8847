"""The console inbox's memory of answers this replica used (``ClusterInbox._spent``: a row put back from a
copy is not used again here) forgets an answer only past its signed expiry on the database's clock, the
clock that expiry is on. It forgot by this replica's wall clock (less 60 s): a replica whose clock ran more
than a minute ahead of the database's, holding more than ``MAX_ROWS`` such marks, forgot an answer the
database still took, and a copy of its row put back was used a second time."""

from __future__ import annotations

import time

import pytest
from tests.cluster.test_inbox_flags_written_by_others import YES, post, take, until

from sentinel_mcp.console import cluster_inbox
from sentinel_mcp.console.cluster_inbox import ClusterInbox
from sentinel_mcp.console.inbox import Inbox
from sentinel_mcp.core import process_clock

pytestmark = pytest.mark.timeout(120)
KEY = b"k" * 32
AHEAD = 700.0  # this replica's wall clock ahead of the database's (its answers' window is 600 s)


@pytest.fixture(scope="module")
def module_url(pg_server) -> str:  # type: ignore[no-untyped-def]
    import psycopg

    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute('CREATE DATABASE "inbox_spent_clock"')
    return pg_server.url.rsplit("/", 1)[0] + "/inbox_spent_clock"


@pytest.mark.parametrize("ahead", [0.0, AHEAD])
async def test_a_row_put_back_is_not_used_again_by_a_replica_whose_clock_runs_ahead(module_url, monkeypatch,
                                                                                    ahead):
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + ahead)
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    a, b = Inbox(), Inbox(ttl=600.0)
    ma = await ClusterInbox(a, module_url, f"replica-a-{ahead:g}", key=KEY).start()
    mb = await ClusterInbox(b, module_url, f"replica-b-{ahead:g}", key=KEY).start()
    try:
        name = f"ahead-{ahead:g}"
        item = post(a, name)
        await until(lambda: b.get("alice", item.id) is not None)
        assert await b.give(b.get("alice", item.id), YES)  # type: ignore[arg-type]
        columns = "answers, answer_mac, expires, used, delivered, live, answered_at"
        copy = (await mb.db.query(f"SELECT {columns} FROM inbox_items WHERE id = ?", (item.id,)))[0]
        assert await take(b, name) is not None  # the one use
        # many other answers used here since, each still inside its window (past the marks' bound)
        far = float(copy[2]) + 3600
        mb._spent.update({f"other-{n}": far for n in range(cluster_inbox.MAX_ROWS)})
        await mb.db.write(
            "UPDATE inbox_items SET answers = ?, answer_mac = ?, expires = ?, used = ?, delivered = ?, "
            "live = ?, answered_at = ? WHERE id = ?", (*copy, item.id))
        assert await take(b, name) is None
        assert item.id in mb._spent
    finally:
        await ma.stop()
        await mb.stop()
