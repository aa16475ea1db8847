"""Consents in the book replicas share live on the database's clock (real PostgreSQL): a replica whose clock
runs ahead cannot stretch a consent it grants, and one whose clock lags cannot use (revive) a consent that
expired everywhere else. The replicas are ``ConsentBook``s whose process sees a skewed clock."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Iterator

import psycopg
import pytest

from sentinel_mcp.gateway import consents as consents_module
from sentinel_mcp.gateway.consents import PURPOSE, ConsentBook
from sentinel_mcp.storage.row_signature import PROCESS_KEY, sign_row

HOUR = 3600.0


def db_now(url: str) -> float:
    with psycopg.connect(url) as conn:
        return float(conn.execute("SELECT EXTRACT(EPOCH FROM clock_timestamp())").fetchone()[0])  # type: ignore[index]


def resign(conn: psycopg.Connection) -> None:  # type: ignore[type-arg]
    """The rows signed again as this process's books sign them (their times changed by the test)."""
    cols = "principal, kind, purpose, granted_at, expires_at, granted_by"
    for row in conn.execute(f"SELECT {cols} FROM consents").fetchall():
        conn.execute("UPDATE consents SET mac = %s WHERE principal = %s AND kind = %s AND purpose = %s",
                     (sign_row(PROCESS_KEY, PURPOSE, row), *row[:3]))


def stored(url: str) -> tuple[float, float | None]:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT granted_at, expires_at FROM consents").fetchone()
    assert row is not None
    return row[0], row[1]


@pytest.fixture
def skew(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """The seconds this process's clock is off by (what the book reads as its wall and process clocks)."""
    off = [0.0]
    monkeypatch.setattr(consents_module, "time", SimpleNamespace(time=lambda: time.time() + off[0]))
    monkeypatch.setattr(consents_module, "process_clock", SimpleNamespace(now=lambda: time.time() + off[0]))
    yield off


@pytest.mark.parametrize("ahead", [HOUR, 30 * 24 * HOUR])
def test_a_replica_whose_clock_runs_ahead_cannot_stretch_a_consent(
    pg_url: str, skew: list[float], ahead: float
) -> None:
    book = ConsentBook(pg_url)
    try:
        skew[0] = ahead
        c = book.grant("alice", "messages", expires_in=60)
        granted, expires = stored(pg_url)
        assert expires is not None and 0 < expires - db_now(pg_url) <= 60
        assert c.expires_at == expires and c.granted_at == granted  # what it says is what is stored
        skew[0] = 0.0  # a replica on time honours it at once (not "granted in the future")
        assert book.current("alice", "messages", "inbox") is not None
        assert [x.kind for x in book.list("alice")] == ["messages"]
    finally:
        book.close()


@pytest.mark.parametrize("behind", [HOUR, 30 * 24 * HOUR])
def test_a_replica_whose_clock_lags_cannot_revive_an_expired_consent(
    pg_url: str, skew: list[float], behind: float
) -> None:
    book = ConsentBook(pg_url)
    try:
        book.grant("alice", "messages", expires_in=60)
        with psycopg.connect(pg_url) as conn:  # expired ten minutes ago by the cluster's clock
            conn.execute("UPDATE consents SET granted_at = granted_at - 660, expires_at = expires_at - 660")
            resign(conn)  # as a replica would have signed it then: only the clock decides here
        skew[0] = -behind
        assert book.current("alice", "messages", "inbox") is None
        assert book.list("alice") == [] and book.list() == []
        # granted through the lagging replica: a full minute on the cluster's clock, not none
        book.grant("alice", "contacts", expires_in=60)
        skew[0] = 0.0
        assert book.current("alice", "contacts", "inbox") is not None
    finally:
        book.close()


def test_a_consent_until_revoked_stays_until_revoked_on_the_database_clock(
    pg_url: str, skew: list[float]
) -> None:
    book = ConsentBook(pg_url)
    try:
        skew[0] = HOUR
        c = book.grant("alice", "messages")
        assert c.expires_at is None and stored(pg_url)[1] is None
        skew[0] = -HOUR
        assert book.current("alice", "messages", "inbox") is not None
        assert book.revoke("alice", "messages") == 1
        assert book.current("alice", "messages", "inbox") is None
        assert [e["action"] for e in book.log("alice")] == ["grant", "revoke"]
    finally:
        book.close()
