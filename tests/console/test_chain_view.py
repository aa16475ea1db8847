"""The Activity page's chain status, in process (through the gateway's open audit database, as the console
reads it): new rows are checked incrementally, an altered old row is found by the periodic full check, an
altered new row at once, and rows deleted at the end are reported."""

from __future__ import annotations

import pytest

from sentinel_mcp.console import chain_view
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog


async def write(log: AuditLog, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        await log.write(
            AuditEntry(
                session="s",
                principal="alice",
                tool=f"t{i}",
                decision="allow",
                outcome="ok",
                timings={"guard": 1.0, "fetch": 0.0, "ask": 0.0, "forward": 2.0},
            )
        )


def status(found: dict, log: AuditLog, row_id: int) -> str:
    return chain_view.status_of(found, {"chain": log.chain, "id": row_id})


async def test_incremental_full_and_truncated(tmp_path, monkeypatch):
    chain_view._CACHE.clear()
    log = await AuditLog(tmp_path / "audit.db").open()
    try:
        await write(log, 5)
        found = await chain_view.statuses(tmp_path / "audit.db")
        assert [status(found, log, i) for i in range(1, 6)] == ["verified"] * 5
        await write(log, 3, 5)  # only the new rows are checked
        assert (await chain_view.statuses(tmp_path / "audit.db"))[log.chain].problem is None
        # an old row altered: found by the full check (forced here; every FULL_EVERY seconds otherwise)
        await log.db.write("UPDATE audit SET decision = 'deny' WHERE id = 3")
        monkeypatch.setattr(chain_view, "FULL_EVERY", -1.0)
        await write(log, 1, 8)
        found = await chain_view.statuses(tmp_path / "audit.db")
        assert [status(found, log, i) for i in (2, 3, 9)] == [
            "verified",
            "broken at row 3",
            "broken at row 3",
        ]
        await log.db.write("UPDATE audit SET decision = 'allow' WHERE id = 3")
        await write(log, 1, 9)
        assert (await chain_view.statuses(tmp_path / "audit.db"))[log.chain].problem is None
        # a new row altered is found by the incremental check alone
        monkeypatch.setattr(chain_view, "FULL_EVERY", 1e9)
        await write(log, 1, 10)
        await log.db.write("UPDATE audit SET tool = 'x' WHERE id = (SELECT max(id) FROM audit)")
        await write(log, 1, 11)
        found = await chain_view.statuses(tmp_path / "audit.db")
        [(last,)] = await log.db.query("SELECT max(id) FROM audit")
        assert (
            status(found, log, last - 1) == f"broken at row {last - 1}"
            and status(found, log, 2) == "verified"
        )
        # rows deleted at the end
        chain_view._CACHE.clear()
        await log.db.write("DELETE FROM audit WHERE id = (SELECT max(id) FROM audit)")
        await log.db.write("UPDATE audit SET tool = 't10' WHERE id = (SELECT max(id) FROM audit)")
        found = await chain_view.statuses(tmp_path / "audit.db")
        assert status(found, log, 1) == "chain end broken"
    finally:
        await log.close()
    # no log, or an unchained row: never "verified"
    assert chain_view.status_of({}, {"chain": "x", "id": 1}) == "not chained"


@pytest.fixture(autouse=True)
def _clean():
    yield
    chain_view._CACHE.clear()
    chain_view._CLOSED.clear()
