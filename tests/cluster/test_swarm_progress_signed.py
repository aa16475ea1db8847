"""What a build's runner writes as it runs (its plan, its report, its counters and warnings) is signed on a
server store (``swarm/build_progress.py``) and checked on every read that hands a build out (``swarm_status``,
``swarm_list``, the console). Before, a database writer without the seal key could rewrite a build's plan or
report, or raise its counters past the caps, and the build's principal was shown that as the build's own.
Now a part that fails its check is withheld (``None``), named in ``unverified`` and logged. Nothing acts on
these values (every cap is counted in the runner's memory): this is about what a person is shown. Real
PostgreSQL and SQLite; the edits are plain SQL."""

from __future__ import annotations

import logging
from pathlib import Path

import psycopg
import pytest

from sentinel_mcp.swarm.state import SwarmStore

pytestmark = pytest.mark.timeout(120)
KEY = b"q" * 32
TID = "t20261205-125000-e0e0e0"
PLAN = {"steps": [{"file": "src/app.py"}]}
REPORT = {"verifier": {"quality_score": 7}}


def sql(url: str, text: str, params: tuple = ()) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(text, params)


async def ran(location: str, tmp: Path) -> SwarmStore:
    store = await SwarmStore(location, key=KEY).open()
    lease = ("replica-a", "replica-a/x", 600.0) if location.startswith("postgresql://") else None
    assert await store.create_task(TID, {"app_name": "n"}, tmp / TID, principal="bob", lease=lease,
                                   caps={"limits": {"max_model_calls": 5}})
    await store.set_plan(TID, PLAN)
    await store.set_counters(TID, 3, 100, 50, ["slow model"])
    await store.set_report(TID, REPORT)
    return store


async def test_a_builds_own_progress_reads_back(pg_url: str, tmp_path: Path) -> None:
    store = await ran(pg_url, tmp_path)
    try:
        task = await store.get_task(TID)
        assert (task["plan"], task["report"], task["model_calls"], task["warnings"]) == (
            PLAN, REPORT, 3, ["slow model"])
        assert "unverified" not in task
        assert [t["model_calls"] for t in await store.list_tasks(principal="bob")] == [3]
    finally:
        await store.close()


EDITS = {
    "plan": ("UPDATE tasks SET plan_json = '{\"steps\": []}'", "plan"),
    "report": ("UPDATE tasks SET report_json = '{\"verifier\": {\"quality_score\": 10}}'", "report"),
    "counters past the caps": ("UPDATE tasks SET model_calls = 100000", "model_calls"),
    "warnings wiped": ("UPDATE tasks SET warnings_json = '[\"all good\"]'", "warnings"),
    "mac moved": ("UPDATE tasks SET report_json = plan_json, report_mac = plan_mac", "report"),
    "caps raised": ("UPDATE tasks SET caps_json = '{\"limits\": {\"max_model_calls\": 80}}'", "caps"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
async def test_progress_edited_in_sql_is_withheld_and_said(
    pg_url: str, tmp_path: Path, edit: str, caplog: pytest.LogCaptureFixture
) -> None:
    text, field = EDITS[edit]
    store = await ran(pg_url, tmp_path)
    try:
        sql(pg_url, text)
        with caplog.at_level(logging.WARNING):
            task = await store.get_task(TID)
            listed = await store.list_tasks(principal="bob")
        assert task[field] is None and field in task["unverified"], task
        assert listed[0][field] is None
        assert "not signed" in caplog.text
        # the other parts stay as the runner wrote them
        kept = {"plan": PLAN, "report": REPORT}
        for other, value in kept.items():
            if other not in task["unverified"]:
                assert task[other] == value
    finally:
        await store.close()


async def test_progress_from_before_signing_is_withheld(pg_url: str, tmp_path: Path) -> None:
    store = await ran(pg_url, tmp_path)
    try:
        sql(pg_url, "UPDATE tasks SET plan_mac = NULL, report_mac = NULL, counters_mac = NULL")
        task = await store.get_task(TID)
        assert set(task["unverified"]) >= {"plan", "report", "model_calls"}
    finally:
        await store.close()


async def test_an_embedded_store_reads_progress_as_before(tmp_path: Path) -> None:
    store = await ran(str(tmp_path / "swarm.db"), tmp_path)
    try:
        task = await store.get_task(TID)
        assert (task["plan"], task["report"], task["model_calls"]) == (PLAN, REPORT, 3)
        assert "unverified" not in task
    finally:
        await store.close()
