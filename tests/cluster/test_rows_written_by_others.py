"""Someone who can write the shared database (a replica's credentials, a DBA, an injected statement elsewhere)
but does not hold the cluster's seal key writes rows: none of them may count as the user's "yes".

A confirmation row grants a destructive call on every replica. Its binding (principal, conversation, tool,
argument digest, policy version) is signed with a key derived from ``sentinel.cluster.seal_key``, so a row
made up in SQL, or a real one moved to another conversation, principal, tool or version, grants nothing (the
call is asked again). Real PostgreSQL; one database for the module."""

from __future__ import annotations

from typing import AsyncIterator

import pytest

from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.confirmation_book import SharedConfirmationBook, signed_binding
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.open import release

VERSION = "default:fail-safe"
KEY = b"k" * 32


def pay(session: str = "alice/label-x-1", principal: str | None = "alice", **arguments: object) -> ToolCall:
    return ToolCall(name="srv__pay", server="srv", tool="pay", arguments=arguments or {"n": 1},
                    session_id=session, principal=principal)


@pytest.fixture(scope="module")
def module_url(pg_server) -> str:  # type: ignore[no-untyped-def]
    import psycopg

    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute('CREATE DATABASE "forged_rows"')
    return pg_server.url.rsplit("/", 1)[0] + "/forged_rows"


@pytest.fixture
async def db(module_url: str) -> AsyncIterator[object]:
    d = open_database(module_url, "confirmations")
    await SharedConfirmationBook.open(d, 60, key=KEY)
    await d.write("DELETE FROM confirmations")
    try:
        yield d
    finally:
        await release(d)


async def test_a_confirmation_made_up_in_sql_grants_nothing(db) -> None:  # type: ignore[no-untyped-def]
    book = SharedConfirmationBook(db, 60, key=KEY)
    c = pay()
    forged = [
        ("", ""),  # no signature at all (as a row written before signing, or by hand)
        ("00" * 32, "alice"),
        (signed_binding(b"x" * 32, "alice", c.session_id, c.identity, c.digest, VERSION), "alice"),  # key
        (signed_binding(KEY, "alice", c.session_id, c.identity, c.digest, VERSION).upper(), "alice"),
        (signed_binding(KEY, "bob", c.session_id, c.identity, c.digest, VERSION), "alice"),
        (signed_binding(KEY, "alice", c.session_id, c.identity, c.digest, VERSION), "bob"),
    ]
    for mac, principal in forged:
        await db.write(
            "INSERT INTO confirmations (session, tool, digest, version, principal, expires_at, mac) "
            "VALUES (?, ?, ?, ?, ?, EXTRACT(EPOCH FROM clock_timestamp()) + 60, ?)",
            (c.session_id, c.identity, c.digest, VERSION, principal, mac),
        )
        assert not await book.held(c, VERSION), (mac, principal)
        assert not await book.take(c, VERSION), (mac, principal)
        await db.write("DELETE FROM confirmations")


async def test_a_real_confirmation_moved_to_another_call_grants_nothing(db) -> None:  # type: ignore[no-untyped-def]
    a, b = SharedConfirmationBook(db, 60, key=KEY), SharedConfirmationBook(db, 60, key=KEY)  # two replicas
    await a.grant(pay(), VERSION)
    assert await b.held(pay(), VERSION)  # the same key on every replica: given on A, good on B
    other_call = pay(n=2)
    moves = [
        ("session", "'bob/label-x-1'", pay("bob/label-x-1", "bob")),
        ("principal", "'bob'", pay(principal="bob")),
        ("digest", f"'{other_call.digest}'", other_call),
        ("version", "'default:deny'", None),
        ("tool", "'srv__drop'", ToolCall(name="srv__drop", server="srv", tool="drop", arguments={"n": 1},
                                          session_id="alice/label-x-1", principal="alice")),
    ]
    for column, value, call in moves:
        await db.write("DELETE FROM confirmations")
        await a.grant(pay(), VERSION)
        await db.write(f"UPDATE confirmations SET {column} = {value}")
        target, version = (call, VERSION) if call is not None else (pay(), "default:deny")
        assert not await b.take(target, version), column
    await db.write("DELETE FROM confirmations")
    await a.grant(pay(), VERSION)
    assert not await SharedConfirmationBook(db, 60, key=b"z" * 32).take(pay(), VERSION)  # another seal key
    await a.grant(pay(), VERSION)
    assert not await b.take(pay(principal="bob"), VERSION)  # another principal's call in alice's session
    assert await b.take(pay(), VERSION) and not await a.take(pay(), VERSION)  # the real one: once
