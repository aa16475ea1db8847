"""Someone who can write the shared database but does not hold the cluster's seal key writes rows of
``consents``: none of them may let a replica read personal data the person never allowed.

A consent made up in SQL, a real one copied to another principal, kind or purpose (``*``: every purpose), its
expiry stretched or lifted (until revoked), its grant moved later, or signed with another key: not honoured on
any replica (not ``current``, not listed), logged, never an error. Real PostgreSQL; two replicas played by two
books in this process (one key: the cluster's). The sensors' consents the same way (another requester, ``*``
for every requester, another sensor, a wider scope, a lifted purpose or retention bound, changed times)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import psycopg
import pytest

from device_tools.sensors.consent_registry import ConsentRegistry
from device_tools.sensors.database import SensorDatabase
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind
from sentinel_mcp.gateway.consents import ConsentBook


@pytest.fixture(scope="module")
def url(pg_server) -> str:  # type: ignore[no-untyped-def]
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute('CREATE DATABASE "forged_consents"')
    return pg_server.url.rsplit("/", 1)[0] + "/forged_consents"


def sql(url: str, statement: str, params: Any = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(statement, params or None)
        return cur.fetchall() if cur.description else []


def read(url: str) -> list[dict[str, Any]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute("SELECT * FROM consents")
        names = [d.name for d in cur.description or ()]
        return [dict(zip(names, r)) for r in cur.fetchall()]


def insert(url: str, row: dict[str, Any]) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        have = {d.name for d in conn.execute("SELECT * FROM consents LIMIT 0").description or ()}
        cols = [c for c in row if c in have]
        conn.execute(f"INSERT INTO consents ({', '.join(cols)}) VALUES ({', '.join(['%s'] * len(cols))})",
                     tuple(row[c] for c in cols))


@pytest.fixture
def replicas(url: str) -> Iterator[tuple[ConsentBook, ConsentBook]]:
    a, b = ConsentBook(url), ConsentBook(url)
    sql(url, "DELETE FROM consents")
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def test_a_consent_made_up_in_sql_is_not_honoured(url: str, replicas) -> None:  # type: ignore[no-untyped-def]
    a, b = replicas
    a.grant("alice", "messages", "support", expires_in=600)
    assert b.current("alice", "messages", "support") is not None  # a real one: honoured on the other replica
    (real,) = read(url)
    for mac in ("", "00" * 32, "é" * 64):
        insert(url, {**real, "principal": "mallory", "kind": "contacts", "purpose": "*", "mac": mac})
        assert b.current("mallory", "contacts", "anything") is None, mac
        assert [c.principal for c in b.list()] == ["alice"], mac
        sql(url, "DELETE FROM consents WHERE principal = 'mallory'")


MOVES = [
    ("another principal", {"principal": "bob"}, ("bob", "messages", "support")),
    ("another kind", {"kind": "contacts"}, ("alice", "contacts", "support")),
    ("every purpose", {"purpose": "*"}, ("alice", "messages", "marketing")),
    ("expiry stretched", {"stretch": 86_400.0}, ("alice", "messages", "support")),
    ("expiry lifted", {"expires_at": None}, ("alice", "messages", "support")),
    ("granted later", {"later": 30.0}, ("alice", "messages", "support")),
    ("granted by", {"granted_by": "cli"}, ("alice", "messages", "support")),
]


@pytest.mark.parametrize(("what", "changed", "asked"), MOVES, ids=[m[0] for m in MOVES])
def test_a_real_consent_moved_or_altered_in_sql_is_not_honoured(url: str, replicas, what: str,  # type: ignore[no-untyped-def]
                                                                changed: dict[str, Any],
                                                                asked: tuple[str, str, str]) -> None:
    a, b = replicas
    a.grant("alice", "messages", "support", expires_in=600, by="elicitation")
    (real,) = read(url)
    changed = dict(changed)
    if "stretch" in changed:
        changed["expires_at"] = real["expires_at"] + changed.pop("stretch")
    if "later" in changed:  # still before now (it would be honoured), and its expiry with it
        shift = changed.pop("later")
        changed |= {"granted_at": real["granted_at"] - 60 + shift, "expires_at": real["expires_at"] + shift}
        sql(url, "UPDATE consents SET granted_at = granted_at - 60")
        (real,) = read(url)
    sql(url, "DELETE FROM consents")
    insert(url, {**real, **changed})
    assert b.current(*asked) is None, what
    assert b.list() == [], what


def test_another_seal_key_honours_nothing(url: str, replicas) -> None:  # type: ignore[no-untyped-def]
    a, _ = replicas
    a.grant("alice", "messages", "support")
    other = ConsentBook(url, key=b"z" * 32)  # a replica with another (or no) seal key
    try:
        assert other.current("alice", "messages", "support") is None and other.list() == []
        other.grant("alice", "contacts")  # what it grants counts with its own key only
        assert other.current("alice", "contacts", "x") is not None
        assert a.current("alice", "contacts", "x") is None
    finally:
        other.close()


# ------------------------------------------------------------------ the sensors' consents

def sensor_rows(url: str) -> list[dict[str, Any]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute("SELECT * FROM sensor_consents")
        names = [d.name for d in cur.description or ()]
        return [dict(zip(names, r)) for r in cur.fetchall()]


def sensor_insert(url: str, row: dict[str, Any]) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM sensor_consents")
        have = {d.name for d in conn.execute("SELECT * FROM sensor_consents LIMIT 0").description or ()}
        cols = [c for c in row if c in have]  # a MAC left out where the table keeps none
        marks = ", ".join(["%s"] * len(cols))
        conn.execute(f"INSERT INTO sensor_consents ({', '.join(cols)}) VALUES ({marks})",
                     tuple(row[c] for c in cols))


SENSOR_MOVES = [
    ("made up", {"mac": ""}, "agent-a", SensorKind.location),
    ("another requester", {"requester": "agent-m"}, "agent-m", SensorKind.location),
    ("every requester", {"requester": "*"}, "agent-m", SensorKind.location),
    ("another sensor", {"sensor": "camera"}, "agent-a", SensorKind.camera),
    ("scope raised", {"scope": "detailed"}, "agent-a", SensorKind.location),
    ("expiry stretched", {"expires_at": 4e9}, "agent-a", SensorKind.location),
    ("expiry lifted", {"expires_at": None}, "agent-a", SensorKind.location),
    ("any purpose", {"purpose": None}, "agent-a", SensorKind.location),
    ("any retention", {"max_retention": None}, "agent-a", SensorKind.location),
]


@pytest.mark.parametrize(("what", "changed", "requester", "sensor"), SENSOR_MOVES,
                         ids=[m[0] for m in SENSOR_MOVES])
def test_a_sensor_consent_made_up_or_altered_in_sql_is_not_honoured(
    url: str, tmp_path: Path, what: str, changed: dict[str, Any], requester: str, sensor: SensorKind
) -> None:
    a, b = SensorDatabase(tmp_path / "a", url), SensorDatabase(tmp_path / "b", url)  # two replicas, one key
    try:
        ConsentRegistry(a).grant("agent-a", SensorKind.location, Scope.standard, expires_in=600,
                                 granted_by="elicitation", purpose="maps", max_retention=60)
        replica_b = ConsentRegistry(b)
        real = [r for r in sensor_rows(url) if r["requester"] == "agent-a"][0]
        assert replica_b.current("agent-a", SensorKind.location) is not None  # the real one: honoured on B
        sensor_insert(url, {**real, **changed})
        assert replica_b.current(requester, sensor) is None, what
        assert replica_b.list(include_expired=True) == [], what
    finally:
        a.close()
        b.close()


def test_the_commands_sign_with_the_clusters_key(pg_url: str, tmp_path: Path) -> None:
    """``sentinel-mcp consent grant`` and ``sentinel-mcp sensors consent grant`` (real subprocesses) sign
    with the key the config's seal key gives: a replica with that key honours them, another key does not."""
    import json
    import subprocess
    import sys

    from sentinel_mcp.gateway.replica import SharedStore

    seal = "commands' seal key, the same on every replica"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"sentinel": {"store": pg_url, "data_dir": str(tmp_path / "data"),
                                               "builtins": [], "cluster": {"seal_key": seal}}}))
    cli = [sys.executable, "-m", "sentinel_mcp", "-c", str(config)]
    sensor = ["sensors", "consent", "grant", "location", "--requester", "agent-a", "--scope", "standard"]
    for args in (["consent", "grant", "alice", "messages"], sensor):
        done = subprocess.run([*cli, *args], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
    cluster = SharedStore(pg_url, "", "", seal.encode())
    book = ConsentBook(pg_url, key=cluster.key("consent"))
    db = SensorDatabase(tmp_path / "r", pg_url, key=cluster.key("sensor consent"))
    other_book, other_db = ConsentBook(pg_url), SensorDatabase(tmp_path / "o", pg_url)  # no (another) key
    try:
        assert book.current("alice", "messages", "x") is not None
        assert ConsentRegistry(db).current("agent-a", SensorKind.location) is not None
        assert other_book.current("alice", "messages", "x") is None
        assert ConsentRegistry(other_db).current("agent-a", SensorKind.location) is None
    finally:
        book.close()
        other_book.close()
        db.close()
        other_db.close()
