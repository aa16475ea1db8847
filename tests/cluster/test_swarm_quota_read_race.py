"""A submit's read of the quota's ledger and of the principal's signed builds, while another replica starts a
build of the same principal between them, is not taken for a ledger edited in SQL (real PostgreSQL).

Seen in the full run (tests/cluster/test_build_limits_across_replicas.py, three replicas submitting for one
principal at once): the ledger read found none, the other replica then committed its build and the ledger in
one transaction, and the builds read found that build #1: "its ledger is gone while its build #1 is there",
the caller told its record was edited outside Sentinel and that an operator must look at the store, where
the answer is "you already have a build running". The two reads each see the store at their own moment:
read in the other order (builds, then ledger), a build seen is always counted by the ledger read after it
(both are committed together, and a ledger only grows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.swarm import build_quota
from sentinel_mcp.swarm.state import SwarmStore
from tests.cluster.test_swarm_quota_held import KEY, start

pytestmark = pytest.mark.timeout(120)


class Between:
    """The store's database, with another replica's submit committed right after the first read (the
    interleaving, forced: whichever of the two reads comes first)."""

    def __init__(self, db: Any, other: SwarmStore, tmp: Path, n: int) -> None:
        self.db, self.other, self.tmp, self.n = db, other, tmp, n
        self.reads = 0

    async def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        rows = await self.db.query(sql, params)
        self.reads += 1
        if self.reads == 1:
            assert await start(self.other, self.n, self.tmp)  # its build and its ledger, one transaction
        return list(rows)


@pytest.mark.parametrize("before", [0, 2], ids=["first-build", "after-two"])
async def test_a_build_started_between_the_two_reads_is_no_tampering(
    pg_url: str, tmp_path: Path, before: int
) -> None:
    a = await SwarmStore(pg_url, key=KEY).open()
    b = await SwarmStore(pg_url, key=KEY).open()
    try:
        for n in range(before):
            assert await start(a, n, tmp_path)
        between = Between(b.db, a, tmp_path, 100)
        ledger = await build_quota.read(between, KEY, "bob")  # raised BuildQuotaError before
        assert between.reads == 2
        assert ledger.seq in (before, before + 1)  # as the ledger stood before or after the other start
        # and the store's own read, after both, counts every build
        assert (await build_quota.read(b.db, KEY, "bob")).seq == before + 1
    finally:
        await a.close()
        await b.close()
