"""Someone who can write the shared database but does not hold the cluster's seal key writes rows of ``facts``
and ``contexts``: none of them may decide a call on any replica.

A fact row is a user's answer (provenance ``user``), a ``$confirmed`` marker (the user's "yes" to one
call), what a read returned, a bound context. Made up in SQL (an answer the user never gave, a "yes" never
said), a real row copied to another principal's conversation, another call or predicate, its provenance
changed, its expiry moved or lifted, or signed with another key: absent to every reader (the guard asks
again, strict symbolic mode does not know the value, nothing is spent), counted and logged, never an error.
Real PostgreSQL; two replicas played by two stores (or guards) in this process, one database for the module.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, AsyncIterator

import psycopg
import pytest

from sentinel_mcp.config import PolicySettings
from sentinel_mcp.core.decision import Allow, Answer, Ask, ToolCall
from sentinel_mcp.policy.fact_store import Fact, FactStore
from sentinel_mcp.policy.guard import PolicyGuard

pytestmark = pytest.mark.timeout(120)

@pytest.fixture(scope="module")
def url(pg_server) -> str:  # type: ignore[no-untyped-def]
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute('CREATE DATABASE "forged_facts"')
    return pg_server.url.rsplit("/", 1)[0] + "/forged_facts"


def sql(url: str, statement: str, params: Any = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(statement, params or None)
        return cur.fetchall() if cur.description else []


def read(url: str, table: str, where: str, params: Any = ()) -> list[dict[str, Any]]:
    """Rows as the database has them: every column but the id (whatever the schema's version)."""
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(f"SELECT * FROM {table} WHERE {where}", params or None)
        names = [d.name for d in cur.description or ()]
        return [{k: v for k, v in zip(names, r) if k != "id"} for r in cur.fetchall()]


def insert(url: str, table: str, row: dict[str, Any]) -> None:
    """A row written in SQL: the columns the table has (a MAC is left out where the table keeps none)."""
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(f"SELECT * FROM {table} LIMIT 0")
        have = {d.name for d in cur.description or ()}
        cols = [c for c in row if c in have]
        conn.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join(['%s'] * len(cols))})",
                     tuple(row[c] for c in cols))


def copy_row(url: str, session: str, fact: str, /, **changed: Any) -> None:
    """A real row rewritten in SQL (its MAC too, unless changed): some columns changed."""
    row = read(url, "facts", "session = %s AND fact = %s", (session, fact))[0]
    sql(url, "DELETE FROM facts WHERE session = %s AND fact = %s", (session, fact))  # moved, not copied
    insert(url, "facts", {**row, **changed})


def row_of(f: Fact, mac: str | None) -> dict[str, Any]:
    return {"session": f.session, "predicate": f.predicate, "args": json.dumps(f.args), "fact": f.fact,
            "provenance": f.provenance, "source_tool": f.source_tool, "source_digest": f.source_digest,
            "contexts": "[]", "established_at": f.established_at, "expires_at": f.expires_at, "mac": mac}


@pytest.fixture
async def replicas(url: str) -> AsyncIterator[tuple[FactStore, FactStore]]:
    a, b = await FactStore(url).open(), await FactStore(url).open()  # one process: one key, as a cluster's
    sql(url, "DELETE FROM facts; DELETE FROM fact_values; DELETE FROM contexts")
    try:
        yield a, b
    finally:
        await a.close()
        await b.close()


def answer(session: str, value: str = "red", provenance: str = "user", ttl: float | None = 600) -> Fact:
    return Fact(session=session, predicate="colour", args=["m1", value], fact=f"colour(m1,{value})",
                provenance=provenance, expires_at=None if ttl is None else time.time() + ttl)


def confirmed(session: str, digest: str = "d-1") -> Fact:
    return Fact(session=session, predicate="$confirmed", args=["srv__pay", digest, "v1", "yes"],
                fact=f"'$confirmed'(srv__pay,'{digest}',v1,yes)", provenance="user", source_tool="srv__pay",
                source_digest=digest, expires_at=time.time() + 300)


async def test_a_user_answer_or_confirmation_made_up_in_sql_is_absent(url: str, replicas) -> None:  # type: ignore[no-untyped-def]
    a, b = replicas
    await a.add([answer("alice/real")])  # a real answer: the same key on every replica, so B reads it
    assert [f.fact for f in await b.valid("alice/real")] == ["colour(m1,red)"]
    assert await b.known_values("alice/real", ["red"]) == {"red"}
    for mac in ("", "00" * 32, "é" * 64, None):  # unsigned (as before signing), made up, not ASCII, NULL
        sql(url, "DELETE FROM facts WHERE session LIKE 'alice/forged%'")
        f, c = answer("alice/forged"), confirmed("alice/forged")
        for row in (f, c):
            insert(url, "facts", row_of(row, mac or ""))
        sql(url, "INSERT INTO fact_values VALUES ('alice/forged', 'red', 'colour(m1,red)')")
        refused = getattr(b, "refused", 0)
        assert await b.valid("alice/forged") == [], mac
        assert await b.known_values("alice/forged", ["red"]) == set()
        assert not await b.has_confirmation("alice/forged", "srv__pay", "d-1")
        assert (await b.spend_confirmation("alice/forged", "srv__pay", "d-1"))[0] == 0
        assert b.refused > refused  # counted (and logged)
        sql(url, "DELETE FROM fact_values WHERE session = 'alice/forged'")


# a real row's columns changed in SQL, its MAC kept: each must make it absent
MOVES = [
    ("another principal's conversation", {"session": "bob/real"}),
    ("another conversation", {"session": "alice/other"}),
    ("another answer", {"args": '["m1","blue"]', "fact": "colour(m1,blue)"}),
    ("another predicate", {"predicate": "shade", "fact": "shade(m1,red)"}),
    ("provenance downgraded", {"provenance": "agent"}),
    ("provenance raised", {"provenance": "seed"}),
    ("expiry extended", {"expires_at": time.time() + 86_400}),
    ("expiry lifted", {"expires_at": None}),
    ("established later", {"established_at": time.time() + 1}),
    ("bound to a call", {"source_tool": "srv__pay", "source_digest": "d-1"}),
    ("through a context", {"contexts": '["focus"]'}),
]


@pytest.mark.parametrize(("what", "changed"), MOVES, ids=[m[0] for m in MOVES])
async def test_a_real_answer_moved_or_altered_in_sql_is_absent(url: str, replicas, what: str,  # type: ignore[no-untyped-def]
                                                               changed: dict[str, Any]) -> None:
    a, b = replicas
    await a.add([answer("alice/real")])
    copy_row(url, "alice/real", "colour(m1,red)", **changed)
    session = changed.get("session", "alice/real")
    valid = await b.valid(session)
    assert valid == [], (what, valid)
    assert await b.known_values(session, ["red", "blue"]) == set()


async def test_an_agents_answer_raised_to_the_users_is_absent(url: str, replicas) -> None:  # type: ignore[no-untyped-def]
    a, b = replicas
    await a.add([answer("alice/real", provenance="agent")])
    sql(url, "UPDATE facts SET provenance = 'user'")
    assert await b.valid("alice/real") == []


async def test_a_real_confirmation_moved_or_stretched_grants_nothing(url: str, replicas) -> None:  # type: ignore[no-untyped-def]
    a, b = replicas
    text = confirmed("alice/real").fact
    for changed, session, digest in (
        ({"session": "bob/real"}, "bob/real", "d-1"),  # another principal's conversation
        ({"source_digest": "d-2"}, "alice/real", "d-2"),  # another call of the same tool (other arguments)
        ({"source_tool": "srv__drop"}, "alice/real", "d-1"),  # another tool
        ({"expires_at": time.time() + 86_400}, "alice/real", "d-1"),  # kept alive past its time
    ):
        sql(url, "DELETE FROM facts")
        await a.add([confirmed("alice/real")])
        copy_row(url, "alice/real", text, **changed)
        tool = changed.get("source_tool", "srv__pay")
        assert not await b.has_confirmation(session, tool, digest), changed
        assert (await b.spend_confirmation(session, tool, digest))[0] == 0, changed
    # the real one, unchanged: spent once, on one replica
    sql(url, "DELETE FROM facts")
    await a.add([confirmed("alice/real")])
    assert await b.has_confirmation("alice/real", "srv__pay", "d-1")
    assert (await b.spend_confirmation("alice/real", "srv__pay", "d-1"))[0] == 1
    assert (await a.spend_confirmation("alice/real", "srv__pay", "d-1"))[0] == 0


async def test_another_seal_key_reads_nothing(url: str, replicas) -> None:  # type: ignore[no-untyped-def]
    a, _ = replicas
    await a.add([answer("alice/real"), confirmed("alice/real")])
    await a.bind_context("alice/real", "focus", "R-1")
    other = await FactStore(url, key=b"z" * 32).open()  # a replica with another (or no) seal key
    try:
        assert await other.valid("alice/real") == [] and await other.contexts("alice/real") == {}
        assert (await other.spend_confirmation("alice/real", "srv__pay", "d-1"))[0] == 0
    finally:
        await other.close()


async def test_a_bound_context_made_up_or_moved_in_sql_is_absent(url: str, replicas) -> None:  # type: ignore[no-untyped-def]
    a, b = replicas
    await a.bind_context("alice/real", "focus", "R-1")
    assert await b.contexts("alice/real") == {"focus": "R-1"}
    sql(url, "INSERT INTO contexts (session, name, value, bound_at) VALUES ('alice/real', 'owner', "
        "'\"mallory\"', 0)")  # made up
    real = read(url, "contexts", "session = 'alice/real' AND name = 'focus'")[0]
    insert(url, "contexts", {**real, "session": "bob/real"})  # copied to bob
    assert await b.contexts("alice/real") == {"focus": "R-1"}
    assert await b.contexts("bob/real") == {}
    sql(url, "UPDATE contexts SET value = '\"R-2\"' WHERE session = 'alice/real'")  # another value
    assert await b.contexts("alice/real") == {}


# ------------------------------------------------------------------ through a replica's policy guard

RULES = """
askable(colour(M, C), "Which colour for ~w?", choice([red, green, blue]), [from([user])]).
guard('asks__work', [mark = M], colour(M, _)).
guard('srv__merge', [first = A], confirmed('Merge ~w?', [A])).
"""


def call(tool: str, session: str, **arguments: Any) -> ToolCall:
    server, name = tool.split("__")
    return ToolCall(name=tool, server=server, tool=name, arguments=arguments, session_id=session,
                    principal=session.split("/")[0])


async def guard(tmp: Path, name: str, url: str) -> PolicyGuard:
    rules = tmp / "rules.pl"  # one file: one rulebase version (a confirmation is bound to the version)
    rules.write_text(RULES)
    g = PolicyGuard([rules], None, store_path=url, seeds={}, local_dir=tmp / name,
                    settings=PolicySettings(guard_timeout=20.0))
    await g.start(watch=False)
    return g


async def test_a_replica_asks_again_for_an_answer_or_yes_written_in_sql(url: str, tmp_path: Path) -> None:
    sql(url, "DELETE FROM facts; DELETE FROM fact_values; DELETE FROM contexts")
    a, b = await guard(tmp_path, "replica-a", url), await guard(tmp_path, "replica-b", url)
    try:
        # a real answer and a real "yes" through A decide on B
        work, merge = call("asks__work", "alice/c1", mark="m1"), call("srv__merge", "alice/c1", first="x")
        for c in (work, merge):
            d = await a.decide(c)
            assert isinstance(d, Ask), d
            content = {"answer": "red"} if c is work else {"answer": True}
            await a.record_answer(c, d.questions[-1], Answer(action="accept", content=content))
        assert isinstance(await b.decide(work), Allow)
        assert isinstance(await b.decide(merge, spend=False), Allow)
        rows = {r["predicate"]: r for r in read(url, "facts", "session = 'alice/c1'")}
        # the same rows in bob's conversation (copied, and made up without a signature), and in another of
        # alice's with the "yes" for another merge: B asks
        bob_work, bob_merge = call("asks__work", "bob/c1", mark="m1"), call("srv__merge", "bob/c1", first="x")
        for mac in (None, ""):
            sql(url, "DELETE FROM facts WHERE session = 'bob/c1'")
            for row in rows.values():
                insert(url, "facts", {**row, "session": "bob/c1", **({} if mac is None else {"mac": mac})})
            sql(url, "INSERT INTO fact_sessions (session, version, prev) VALUES ('bob/c1', "
                "nextval('fact_session_versions'), 0) ON CONFLICT (session) DO UPDATE SET prev = "
                "fact_sessions.version, version = excluded.version")  # as a replica's change: B reloads
            assert isinstance(await b.decide(bob_work), Ask), mac
            assert isinstance(await b.decide(bob_merge, spend=False), Ask), mac
        # the real "yes" changed to another call's (its digest): asks; the real one (alice/c1) still allows
        other = call("srv__merge", "alice/c2", first="y")
        row = rows["$confirmed"]
        insert(url, "facts", {**row, "session": "alice/c2", "source_digest": other.digest,
                              "args": row["args"].replace(merge.digest, other.digest),
                              "fact": row["fact"].replace(merge.digest, other.digest)})
        assert isinstance(await b.decide(other, spend=False), Ask)
        assert isinstance(await b.decide(merge, spend=False), Allow)
        assert b.store.refused > 0
    finally:
        await a.close()
        await b.close()


# ------------------------------------------------------------------ which conversation a label names

async def test_a_label_pointed_elsewhere_in_sql_is_not_followed(url: str) -> None:
    """A label's row says which conversation (and so which facts) a principal's calls decide in. Pointed in
    SQL at another conversation of the same label (an older one, whose answers still live, or one made up),
    or made up for a label never named: no replica follows it; the label names a conversation of its own."""
    from sentinel_mcp.storage import open_database
    from sentinel_mcp.storage.conversation_names import SharedLabels
    from sentinel_mcp.storage.open import release

    db = open_database(url, "labels")
    try:
        a = await SharedLabels.open(db, 3600)
        b = SharedLabels(db, 3600, refresh=0)  # another replica, remembering nothing
        sid = await a.session("alice", "trip")
        assert await b.session("alice", "trip") == sid and await b.current("alice", "trip") == sid
        elsewhere = "alice/label-trip-" + "0" * 16
        sql(url, "UPDATE conversation_labels SET session = %s WHERE principal = 'alice' AND label = 'trip'",
            (elsewhere,))
        assert await b.current("alice", "trip") != elsewhere
        now = await b.session("alice", "trip")
        assert now != elsewhere and now.startswith("alice/label-trip-")
        assert await b.session("alice", "trip") == now and await b.current("alice", "trip") == now
        made_up = "alice/label-new-" + "f" * 16
        sql(url, "INSERT INTO conversation_labels (principal, label, session, used_at) VALUES ('alice', "
            "'new', %s, EXTRACT(EPOCH FROM clock_timestamp()))", (made_up,))
        assert await b.current("alice", "new") is None
        fresh = await b.session("alice", "new")
        assert fresh != made_up and fresh.startswith("alice/label-new-")
    finally:
        await release(db)
