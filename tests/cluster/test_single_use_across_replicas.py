"""Single use across replicas: several processes (each its own connections, as replicas are) race to use the
same nonces and confirmations on one PostgreSQL; every one is used exactly once, never twice, never lost."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from sentinel_mcp.gateway.request_state import RequestStateSeal
from sentinel_mcp.gateway.stored_nonces import SCHEMA as NONCES, StoredNonceBook
from sentinel_mcp.policy.fact_store import Fact, FactStore
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.open import release
from tests.cluster.race_worker import SEAL_KEY

ROOT = Path(__file__).resolve().parents[2]
WORKER = str(Path(__file__).with_name("race_worker.py"))
ROUNDS = 150  # keys raced per test (each by every process): bounded by count
RACERS = 3


def race(url: str, kind: str, keys: list[str]) -> list[list[str]]:
    procs = [subprocess.Popen([sys.executable, WORKER, url, kind, str(seed)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, text=True)
             for seed in range(RACERS)]
    for p in procs:
        assert p.stdin is not None
        p.stdin.write(json.dumps(keys))
        p.stdin.close()
    out = []
    for p in procs:
        stdout = p.stdout.read() if p.stdout else ""
        assert p.wait(120) == 0, p.stderr.read() if p.stderr else ""
        out.append(json.loads(stdout))
    return out


async def test_each_nonce_is_used_by_exactly_one_replica(pg_url: str) -> None:
    db = open_database(pg_url, "nonces")
    await db.migrate(NONCES)
    try:
        book = StoredNonceBook(db)
        keys = [f"n{i}" for i in range(ROUNDS)]
        for k in keys:
            await asyncio.to_thread(book.issue, k, time.time() + 300)
        won = await asyncio.to_thread(race, pg_url, "nonce", keys)
        counts = Counter(k for w in won for k in w)
        assert set(counts) == set(keys) and set(counts.values()) == {1}, counts.most_common(3)
        assert (await db.query("SELECT count(*) FROM nonces"))[0][0] == 0
    finally:
        await release(db)


async def test_each_confirmation_is_spent_by_exactly_one_replica(pg_url: str) -> None:
    store = await FactStore(pg_url, key=SEAL_KEY).open()  # the key every replica signs facts with
    try:
        keys = [f"sess{i}" for i in range(ROUNDS)]
        await store.add([Fact(session=k, predicate="$confirmed", args=["srv__pay", "digest-1", "v1", "yes"],
                              fact="'$confirmed'(srv__pay,'digest-1',v1,yes)", provenance="user",
                              source_tool="srv__pay", source_digest="digest-1", expires_at=time.time() + 300)
                         for k in keys])
        won = await asyncio.to_thread(race, pg_url, "confirmation", keys)
        counts = Counter(k for w in won for k in w)
        assert set(counts) == set(keys) and set(counts.values()) == {1}, counts.most_common(3)
        assert await store.valid(keys[0]) == []
    finally:
        await store.close()


async def test_a_sealed_state_opens_on_another_replica_and_is_still_used_once(pg_url: str) -> None:
    """Two replicas' seals with the configured key: a retry reaching the other replica works, once; a replica
    with another key (a misconfigured one) grants nothing."""
    db = open_database(pg_url, "nonces")
    await db.migrate(NONCES)
    try:
        key = b"k" * 32
        a, b = (RequestStateSeal(key=key, nonces=StoredNonceBook(db)) for _ in range(2))
        other = RequestStateSeal(key=b"x" * 32, nonces=StoredNonceBook(db))
        token = await asyncio.to_thread(a.seal, {"question": "q1"})
        assert other.open(token) is None
        payload = b.open(token)
        assert payload is not None and payload["question"] == "q1"
        assert await asyncio.to_thread(b.consume, payload) is True
        assert await asyncio.to_thread(a.consume, a.open(token) or {}) is False  # replay on the first replica
    finally:
        await release(db)


@pytest.mark.parametrize("n", [1])
async def test_a_change_on_one_replica_reaches_the_others_next_read(pg_url: str, n: int) -> None:
    a, b = await FactStore(pg_url).open(), await FactStore(pg_url).open()
    try:
        v0 = await b.version("s")
        await a.add([Fact(session="s", predicate="p", args=["x"], fact="p(x)", provenance="user")])
        assert await b.version("s") == v0 + n and [f.fact for f in await b.valid("s")] == ["p(x)"]
    finally:
        await a.close()
        await b.close()


async def test_replicas_clocks_never_stretch_a_sealed_states_nonce(pg_url: str) -> None:
    """A nonce's expiry is kept on the database's clock (a replica's own clock may run ahead or behind):
    before, a replica an hour behind took a nonce that had expired everywhere else, so it honoured an expired
    state (its own clock checks the seal too), and one an hour ahead wrote nonces that lived an hour
    longer."""
    db = open_database(pg_url, "nonces")
    try:
        await db.migrate(NONCES)
        now = time.time()
        ahead = StoredNonceBook(db, clock=lambda: time.time() + 3600)
        behind = StoredNonceBook(db, clock=lambda: time.time() - 3600)
        await ahead.issue_async("n1", now + 3600 + 60)  # sealed by the replica ahead: a minute to live
        left = await db.query("SELECT expires_at - EXTRACT(EPOCH FROM clock_timestamp()) FROM nonces")
        assert 0 < left[0][0] <= 60
        await db.write("UPDATE nonces SET expires_at = EXTRACT(EPOCH FROM clock_timestamp()) - 600")
        assert not await behind.consume_async("n1")  # expired ten minutes ago by the cluster's clock
        await behind.issue_async("n2", now - 3600 + 60)  # sealed by the replica behind: a minute, not none
        assert await ahead.consume_async("n2") and not await behind.consume_async("n2")
        behind.issue("n3", now - 3600 + 60)  # the blocking path alike
        assert ahead.consume("n3")
    finally:
        await release(db)
