"""Every audit row's hashed text, hash and MAC are what a reference written here from the format's rules gives
(its ``HASHED`` columns as compact JSON, the empty optional tail left out; sha256 over the previous hash and
that text; HMAC-sha256 over the text), whatever path wrote it (alone, on the loop; in a batch) and whatever
shapes its values take: the hot path's shortcuts (perf-rows9: sha256 state copied, the tuple not copied) may
make no row differ. A tampered row still fails ``verify_file``."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.gateway.audit_chain import verify_file
from sentinel_mcp.gateway.audit_schema import GENESIS, HASHED, OPTIONAL_TAIL

KEY = b"k" * 32

ARGUMENTS: list[Any] = [
    None, {}, {"a": 1}, {"x": "\u00e9t\u00e9 \u2603 \U0001f600"}, {"big": 2**200, "neg": -(2**70)},
    {"f": 0.1, "g": 1e300, "h": -0.0, "i": 5e-324, "inf": float("inf")},
    {"nested": [{"a": [1, [2, [3, {"b": None}]]]}, True, False]}, {"lone": "\udc80x"}, {"nul": "a\x00b"},
    {"z": 1, "a": 2, "m": {"q": 1, "b": 2}}, ["not", "a", "dict"], "text", 7,
]
TEXTS: list[Any] = [None, "", "plain", "\u00fcber \u2603", "bad \udc80 half", "nul\x00in", "x" * 1500]
TIMINGS: list[Any] = [
    None, {"guard": 0.023, "fetch": 0.0, "ask": 0.0, "forward": 0.78},
    {"guard": 1e-7, "fetch": 12.5, "ask": 3.0, "forward": 123456.789}, {"guard": 1, "fetch": 0.0},
    {"guard": float("inf"), "fetch": 0.0, "ask": 0.0, "forward": 0.0},
]


def entries() -> list[AuditEntry]:
    out = []
    for n in range(len(ARGUMENTS) * len(TIMINGS)):
        text = TEXTS[n % len(TEXTS)]
        out.append(AuditEntry(
            session=f"s\u00e9{n % 3}", tool="t\u2603" if n % 4 == 0 else "tb__noop", decision="allow",
            outcome=("forwarded", "ok", "tool_error")[n % 3], event=("decision", "outcome", "final")[n % 3],
            ts=1_700_000_000.0 + n / 7, client=None if n % 5 == 0 else "cli",
            upstream=None if n % 6 == 0 else "tb",
            arg_digest="a" * 64 if n % 2 else None, arguments=ARGUMENTS[n % len(ARGUMENTS)], reason=text,
            proof=None if n % 3 else {"rule": "r", "why": [text, n, 2**65]}, policy_version="v1",
            latency_ms=None if n % 7 == 0 else n * 1.1, error=TEXTS[(n + 3) % len(TEXTS)],
            decision_id=f"d{n:04d}", principal=None if n % 2 else f"p\u00e9{n}",
            timings=TIMINGS[n % len(TIMINGS)],
        ))
    return out


def reference_text(values: tuple[Any, ...]) -> str:
    values = list(values)
    for _ in range(OPTIONAL_TAIL):
        if values and values[-1] is None:
            values.pop()
    return json.dumps(values, ensure_ascii=False, separators=(",", ":"))


def stored(path: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM audit ORDER BY id")]
    finally:
        conn.close()


async def write_all(path: Path, key: bytes | None) -> int:
    log = await AuditLog(path, key=key).open()
    try:
        rows = entries()
        half = len(rows) // 2
        for e in rows[:half]:  # alone: committed on this thread, ``_chained``
            await log.write(e, alone=True)
        # together: the batch path (``_batched``), rows in flight at once
        await asyncio.gather(*(log.write(e) for e in rows[half:]))
        return len(rows)
    finally:
        await log.close()


@pytest.mark.parametrize("key", [None, KEY], ids=["no-key", "sealed"])
async def test_every_row_is_the_reference_text_hash_and_mac(tmp_path: Path, key: bytes | None) -> None:
    path = tmp_path / "audit.db"
    written = await write_all(path, key)
    rows = stored(path)
    assert len(rows) == written
    prev = GENESIS
    for row in rows:
        text = reference_text(tuple(row[c] for c in HASHED))
        body = text.encode("utf-8", "surrogatepass")
        assert row["prev_hash"] == prev, row["id"]
        assert row["hash"] == hashlib.sha256(prev.encode("ascii") + body).hexdigest(), row["id"]
        if key is None:
            assert row["mac"] is None
        else:
            assert row["mac"] == hmac.new(key, body, hashlib.sha256).hexdigest(), row["id"]
        prev = row["hash"]
    # the shapes really went in: non-ASCII, escaped lone surrogates, big ints as text, the optional tail cut
    texts = [reference_text(tuple(r[c] for c in HASHED)) for r in rows]
    assert any("\u2603" in t for t in texts) and any("\\\\udc80" in t for t in texts)
    assert any(str(2**200) in t for t in texts)
    assert {len(json.loads(t)) for t in texts} == {len(HASHED) - 2, len(HASHED) - 1, len(HASHED)}
    assert verify_file(path, key=key).ok


@pytest.mark.parametrize("key", [None, KEY], ids=["no-key", "sealed"])
async def test_a_tampered_row_still_fails(tmp_path: Path, key: bytes | None) -> None:
    path = tmp_path / "audit.db"
    await write_all(path, key)
    assert verify_file(path, key=key).ok
    conn = sqlite3.connect(path)
    try:
        conn.execute("UPDATE audit SET tool = 'other' WHERE id = 9")
        conn.commit()
    finally:
        conn.close()
    report = verify_file(path, key=key)
    assert not report.ok
