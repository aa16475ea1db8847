"""The fact store's value index (strict symbolic mode looks a call's values up there instead of reading all
of the session's facts): kept in step with adds, deletes, expiry and purges, and built for an old store."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from sentinel_mcp.policy.fact_store import Fact, FactStore

pytestmark = pytest.mark.timeout(30)


def fact(session: str, pred: str, args: list, text: str, expires_at: float | None = None) -> Fact:
    return Fact(
        session=session, predicate=pred, args=args, fact=text, provenance="observed", expires_at=expires_at
    )


async def test_known_values_follow_the_facts(tmp_path: Path) -> None:
    now = time.time()
    async with FactStore(tmp_path / "facts.db") as store:
        await store.add(
            [
                fact(
                    "s1",
                    "booking",
                    ["BK-1", {"legs": ["F1", "F2"]}, 3],
                    "booking('BK-1',json([legs=['F1','F2']]),3)",
                ),
                fact("s1", "status", ["BK-2", "open"], "status('BK-2',open)", expires_at=now + 0.5),
                fact("s1", "$fetched", ["BK-9"], "'$fetched'('BK-9')"),
                fact("s2", "booking", ["BK-3"], "booking('BK-3')"),
            ]
        )
        probe = ["BK-1", "F2", "BK-2", "open", "BK-9", "BK-3", "3", "nowhere"]
        # nested values count; numbers, bookkeeping facts and other sessions do not
        assert await store.known_values("s1", probe, now) == {"BK-1", "F2", "BK-2", "open"}
        assert await store.known_values("s1", probe, now + 1) == {"BK-1", "F2"}  # status/2 expired
        assert await store.known_values("s2", probe, now) == {"BK-3"}

        await store.delete("s1", ["booking('BK-1',json([legs=['F1','F2']]),3)"])
        assert await store.known_values("s1", probe, now) == {"BK-2", "open"}
        assert await store.purge_expired(now + 1) == 1
        assert await store.known_values("s1", probe, now) == set()
        (rows,) = await store.db.query("SELECT COUNT(*) FROM fact_values WHERE session = 's1'")
        assert rows[0] == 0  # nothing left behind for deleted or purged facts

        many = [f"V{i}" for i in range(1200)]  # more values than one SQL statement may carry
        await store.add([fact("s3", "v", [v], f"v('{v}')") for v in many])
        assert await store.known_values("s3", many + ["W"], now) == set(many)


async def test_a_store_from_before_the_index_gets_it_on_open(tmp_path: Path) -> None:
    path = tmp_path / "facts.db"
    async with FactStore(path) as store:
        await store.add([fact("s1", "booking", ["BK-1", ["F1"]], "booking('BK-1',['F1'])")])
    with sqlite3.connect(path) as db:  # what a version-1 store looks like: no value rows
        db.execute("DELETE FROM fact_values")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        db.execute("DROP TABLE storage_schema")  # nor the storage layer's record of migrations
    db.close()  # the store opens its file exclusively (see sentinel_mcp/storage/sqlite.py)
    async with FactStore(path) as store:
        assert await store.known_values("s1", ["BK-1", "F1", "X"]) == {"BK-1", "F1"}
        (row,) = await store.db.query("SELECT value FROM meta WHERE key = 'schema_version'")
        assert json.loads(row[0]) == 2


async def test_strict_mode_accepts_seeded_values_on_the_first_call(tmp_path: Path) -> None:
    from sentinel_mcp.core.decision import Deny, ToolCall
    from sentinel_mcp.policy.guard import PolicyGuard

    rb = tmp_path / "strict.pl"
    rb.write_text("option(strict_symbolic).\nfact(owner/1).\nguard('t__use', [user = U], owner(U)).\n")
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db", seeds={"owner": "u_1"})
    await guard.start(watch=False)
    try:

        def use(user: str) -> ToolCall:
            return ToolCall(
                name="t__use", server="t", tool="use", arguments={"user": user}, session_id="fresh"
            )

        assert (await guard.decide(use("u_1"))).kind == "allow"
        d = await guard.decide(use("u_2"))
        assert isinstance(d, Deny) and "strict symbolic mode" in d.reason
    finally:
        await guard.close()


def test_string_values_at_any_depth_and_only_strings() -> None:
    from sentinel_mcp.policy.fact_rows import string_values

    deep: object = "bottom"
    for i in range(50_000):  # far past Python's recursion limit: a hostile result may nest this deep
        deep = [deep, {"k": str(i % 3)}] if i % 2 else {"v": deep}
    assert string_values(deep) == {"bottom", "0", "1", "2"}
    # keys are not values; numbers, booleans, None and bytes are not strings; str subclasses are
    class Named(str):
        pass

    value = {"key": [1, 2.5, True, None, b"bytes", ("t",), Named("n"), {"inner": ["x", {"y": ""}]}]}
    assert string_values(value) == {"t", "n", "x", ""}
    # a value holding itself (no JSON can, Python can) ends instead of looping
    loop: list = ["a"]
    loop.append(loop)
    cyclic: dict = {"k": "b", "l": loop}
    cyclic["self"] = cyclic
    assert string_values(cyclic) == {"a", "b"}
