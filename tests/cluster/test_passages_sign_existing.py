"""``sentinel-mcp passages sign-existing`` on a real PostgreSQL (``search/passage_resign.py``): memories
signed before ids were signed are never read again, silently; the command reports them, and with
``--yes`` signs again only the rows the cluster's key vouches for (the older signature, made with this
key, on one row). Rows without a signature, with another key's, or an older signature copied onto a
second row are refused and listed, and stay unread. A dry run changes nothing."""

from __future__ import annotations

import hashlib
import json
import logging
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from sentinel_mcp.search.passage_rows import PURPOSE
from sentinel_mcp.storage.row_signature import derived_key, sign_row
from tests.cluster.test_passages_signed import service

SEAL = "passages-resign-test-seal-key-0123456789"
KEY = derived_key(SEAL.encode(), "passages")
OTHER = derived_key(b"another-clusters-seal-key-0123456789ab", "passages")
COLS = ("id, namespace, source, heading, text, line_start, line_end, tags, created_at, expires_at, embedder, "
        "vector")


def older_mac(key: bytes, row: tuple[Any, ...]) -> str:
    """The signature before ids were signed (4e53b6ed): every column but the id, the vector's sha256."""
    return sign_row(key, PURPOSE, (*row[1:11], hashlib.sha256(bytes(row[11])).hexdigest()))


def sql(url: str, text: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(text, params)
        rows = cur.fetchall() if cur.description else []
        conn.execute("UPDATE passage_ns SET generation = generation + 1")
        return rows


def cli(tmp: Path, url: str, *args: str) -> subprocess.CompletedProcess:
    cfg = tmp / "cfg.json"
    cfg.write_text(json.dumps({"sentinel": {"store": url, "builtins": [], "cluster": {"seal_key": SEAL}}}))
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "passages", "sign-existing",
                           *args], capture_output=True, text=True, timeout=120)


async def recalled(url: str) -> set[str]:
    s = await service(url, KEY).open()
    try:
        return {h["text"] for h in await s.memory_recent("alice", 20)}
    finally:
        await s.close()


async def test_only_rows_the_key_vouches_for_are_signed_again(tmp_path: Path, pg_url: str,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    s = await service(pg_url, KEY).open()
    now = time.time()
    texts = {kind: f"alice {kind} memory" for kind in ("current", "older", "copied", "unsigned", "forged")}
    for text in texts.values():
        await s.memory_store("alice", text, now=now)
    await s.close()
    assert await recalled(pg_url) == set(texts.values())
    rows = {r[4]: r for r in sql(pg_url, f"SELECT {COLS} FROM passages WHERE namespace = 'memory:alice'")}
    # as rows from before ids were signed hold them
    for kind in ("older", "copied"):
        row = rows[texts[kind]]
        sql(pg_url, "UPDATE passages SET mac = %s WHERE id = %s", (older_mac(KEY, row), row[0]))
    sql(pg_url, "UPDATE passages SET mac = NULL WHERE id = %s", (rows[texts["unsigned"]][0],))
    forged = rows[texts["forged"]]
    sql(pg_url, "UPDATE passages SET mac = %s WHERE id = %s", (older_mac(OTHER, forged), forged[0]))
    # the older signature did not cover the id: a copy to a new id carries it too
    sql(pg_url, "INSERT INTO passages (namespace, source, heading, text, line_start, line_end, tags, "
                "created_at, expires_at, embedder, vector, mac) SELECT namespace, source, heading, text, "
                "line_start, line_end, tags, created_at, expires_at, embedder, vector, mac FROM passages "
                "WHERE id = %s",
        (rows[texts["copied"]][0],))
    with caplog.at_level(logging.WARNING, "sentinel_mcp.search.shared_index"):
        # what a replica reads: the others gone, said at its start (the unsigned row: the others it cannot
        # tell from a forgery without reading every row)
        assert await recalled(pg_url) == {texts["current"]}
    assert any("1 live row(s) without a signature" in r.getMessage() and "sign-existing" in r.getMessage()
               for r in caplog.records), caplog.records

    macs_before = sql(pg_url, "SELECT id, mac FROM passages ORDER BY id")
    for dry in ([], ["--dry-run"]):
        out = cli(tmp_path, pg_url, *dry, "--json")
        assert out.returncode == 0, out.stderr
        report = json.loads(out.stdout)
        counts = {k: v.get("memory:alice", 0) for k, v in report["counts"].items()}
        assert counts == {"current": 1, "vouched": 1, "copied": 2, "unsigned": 1, "forged": 1}, report
        assert report["signed"] == 0 and report["dry_run"]
        assert sql(pg_url, "SELECT id, mac FROM passages ORDER BY id") == macs_before
    table = cli(tmp_path, pg_url)
    assert "nothing changed" in table.stdout and str(forged[0]) in table.stdout, table.stdout

    done = cli(tmp_path, pg_url, "--yes")
    assert done.returncode == 0 and "signed again: 1 row(s)" in done.stdout, done.stdout + done.stderr
    assert await recalled(pg_url) == {texts["current"], texts["older"]}
    again = json.loads(cli(tmp_path, pg_url, "--yes", "--json").stdout)  # nothing more to vouch for
    assert again["signed"] == 0 and again["counts"]["current"] == {"memory:alice": 2}
    assert again["counts"]["vouched"] == {}
