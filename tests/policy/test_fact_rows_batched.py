"""The fact store writes a result's facts as a few multi-row statements (SQLite); what it stores is exactly
what one statement per row stored: the same facts, value rows, types and the newer fact of a pair winning."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from sentinel_mcp.policy import fact_store as fs
from sentinel_mcp.policy.fact_rows import Fact, value_rows
from sentinel_mcp.policy.fact_store import FactStore
from sentinel_mcp.storage import Statement

pytestmark = pytest.mark.timeout(60)

TEXTS = ["it's", "a\x00b", "line\nbreak", "\u00e9\U0001f600", "\ud800", "\\", "')", "x" * 3000, ""]


def _facts(seed: int, count: int) -> list[Fact]:
    rnd = random.Random(seed)
    now = time.time()
    out = []
    for i in range(count):
        key = rnd.randrange(count // 3 + 1)  # repeats: the same fact again in one batch
        args = [f"R{key}", rnd.choice(TEXTS), {"legs": [rnd.choice(TEXTS), i]}, i % 7]
        out.append(Fact(
            session=rnd.choice(["s1", "s2", "\ud83d lone"]), predicate=rnd.choice(["booking", "$fetched"]),
            args=args, fact=f"booking('R{key}')", provenance=rnd.choice(["observed", "user", "seed"]),
            source_tool=rnd.choice([None, "airline__get", "\udfff"]), source_digest=rnd.choice([None, "d"]),
            contexts=rnd.choice([[], ["booking_of_interest"]]), established_at=now + i,
            expires_at=rnd.choice([None, now + 300, now - 1]),
        ))
    return out


async def _per_row(store: FactStore, facts: list[Fact]) -> None:
    """The store's former write: one executemany statement step per row."""
    rows = [
        (fs._kept(f.session), fs._kept(f.predicate), fs.json.dumps(f.args), fs._kept(f.fact), f.provenance,
         fs._opt(f.source_tool), fs._opt(f.source_digest), fs.json.dumps(f.contexts), f.established_at,
         f.expires_at)
        for f in facts
    ]
    values = [r for f in facts for r in value_rows(f.session, f.predicate, f.args, f.fact)]
    await store.db.run([Statement(fs._ADD_VALUE, values, many=True), Statement(fs._UPSERT, rows, many=True)])


@pytest.mark.parametrize("count", [1, 26, 64, 65, 300])
async def test_batched_facts_are_stored_as_row_by_row(tmp_path: Path, count: int) -> None:
    facts = _facts(count, count)
    async with FactStore(tmp_path / "a.db") as batched, FactStore(tmp_path / "b.db") as one_by_one:
        await batched.add(facts)
        await _per_row(one_by_one, facts)
        for table, order in (("facts", "session, fact"), ("fact_values", "session, value, fact")):
            cols = "*" if table == "fact_values" else fs._COLS
            dump = f"SELECT {cols} FROM {table} ORDER BY {order}"
            assert await batched.db.query(dump) == await one_by_one.db.query(dump), table
        for session in ("s1", "s2", "\ud83d lone"):  # and read back through the store, texts restored
            got = await batched.valid(session, now=0)
            want = await one_by_one.valid(session, now=0)
            assert [f.model_dump() for f in got] == [f.model_dump() for f in want]


async def test_a_refused_fact_writes_none_of_its_batch(tmp_path: Path) -> None:
    good = _facts(1, 30)
    bad = good[5].model_copy(update={"provenance": "forged"})  # the schema's CHECK refuses it
    async with FactStore(tmp_path / "f.db") as store:
        with pytest.raises(Exception):
            await store.add([*good[:5], bad, *good[6:]])
        assert await store.db.query("SELECT COUNT(*) FROM facts") == [(0,)]
        assert await store.db.query("SELECT COUNT(*) FROM fact_values") == [(0,)]
