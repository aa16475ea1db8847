"""A build's error, its steps' records and its model-call rows are signed on a server store, and each kind of
row is numbered with a signed running count of it (``swarm/build_progress.py``, ``swarm/signed_parts.py``).
Before, a database writer without the seal key could rewrite the error the operator reads, clear a rejected
step's issues or turn it ACCEPTED, and delete ``api_calls`` rows to hide spend (the console counts the rows):
all shown as the build's own. Now an edited part is withheld and named in ``unverified``, a deleted row is
counted missing, and a copied row counts once. Real PostgreSQL; the edits are plain SQL."""

from __future__ import annotations

import logging
from pathlib import Path

import psycopg
import pytest

from sentinel_mcp.swarm import build_lease
from sentinel_mcp.swarm.build_progress import missing_rows
from sentinel_mcp.swarm.state import SwarmStore

pytestmark = pytest.mark.timeout(120)
KEY = b"r" * 32
TID = "t20261205-153000-a1a1a1"
ISSUE = {"severity": "error", "message": "uses a permission the spec does not allow"}


def sql(url: str, text: str, params: tuple = ()) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(text, params)


async def call(store: SwarmStore, tokens: int, step: int | None = 1) -> None:
    await store.record_api_call(TID, step_number=step, role="coder", backend="openai", model="m", status="OK",
                                attempts=1, prompt_tokens=tokens, completion_tokens=tokens // 2,
                                duration_ms=5, error=None)


async def ran(url: str, tmp: Path, calls: int = 3) -> SwarmStore:
    store = await SwarmStore(url, key=KEY).open()
    assert await store.create_task(TID, {"app_name": "n"}, tmp / TID, principal="bob",
                                   lease=("replica-a", "replica-a/x", 600.0))
    await store.record_step(TID, 1, 1, "app/src/A.kt", "REJECTED", [ISSUE], ["slow"], 10)
    await store.record_step(TID, 1, 2, "app/src/A.kt", "ACCEPTED", [], [], 12, "ab" * 32)
    for n in range(calls):
        await call(store, 100 + n)
    return store


async def test_the_builds_own_record_reads_back_whole(pg_url: str, tmp_path: Path) -> None:
    store = await ran(pg_url, tmp_path)
    try:
        await store.set_state(TID, "FAILED", error="the coder broke the build")
        task = await store.get_task(TID)
        assert task["error"] == "the coder broke the build" and "unverified" not in task, task
        steps, calls = await store.steps_of(TID), await store.api_calls_of(TID)
        assert [s["issues"] for s in steps] == [[ISSUE], []]
        assert [c["prompt_tokens"] for c in calls] == [100, 101, 102]
        assert not any(r.get("unverified") for r in steps + calls)
        assert (missing_rows(task, "steps", steps), missing_rows(task, "api_calls", calls)) == (0, 0)
        assert (task["steps_recorded"], task["calls_recorded"]) == (2, 3)
    finally:
        await store.close()


async def test_a_second_process_numbers_on_from_the_signed_count(pg_url: str, tmp_path: Path) -> None:
    first = await ran(pg_url, tmp_path)
    await first.close()
    second = await SwarmStore(pg_url, key=KEY).open()
    try:
        await call(second, 7)  # the sweeper's shielded record after a restart, say
        task = await second.get_task(TID)
        calls = await second.api_calls_of(TID)
        assert [c["seq"] for c in calls] == [1, 2, 3, 4] and missing_rows(task, "api_calls", calls) == 0
    finally:
        await second.close()


ERROR_EDITS = {
    "rewritten": "UPDATE tasks SET error = 'completed fine (ignore)'",
    "cleared": "UPDATE tasks SET error = NULL",
    "another build's": "UPDATE tasks SET error = 'x', error_mac = (SELECT plan_mac FROM tasks LIMIT 1)",
    "lines": "UPDATE tasks SET error = E'the coder broke the build\\n[COMPLETED] ok'",
}


@pytest.mark.parametrize("edit", sorted(ERROR_EDITS))
async def test_an_error_edited_in_sql_is_withheld_and_said(
    pg_url: str, tmp_path: Path, edit: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = await ran(pg_url, tmp_path)
    try:
        await store.set_state(TID, "FAILED", error="the coder broke the build")
        sql(pg_url, ERROR_EDITS[edit])
        with caplog.at_level(logging.WARNING):
            task = await store.get_task(TID)
            listed = await store.list_tasks(principal="bob")
        assert task["error"] is None and "error" in task["unverified"], task
        assert listed[0]["error"] is None
        assert "not signed" in caplog.text
    finally:
        await store.close()


async def test_a_lapsed_builds_reason_is_signed_with_its_end(pg_url: str, tmp_path: Path) -> None:
    store = await ran(pg_url, tmp_path)
    try:
        # the lease lapses by the database's clock (signed as it was: no SQL edit of the lease itself)
        sql(pg_url, "UPDATE tasks SET lease_until = 0")
        await build_lease.end_lapsed(store.db, key=KEY)
        task = await store.get_task(TID)
        # lease_until set back in SQL: its lease no longer signed, so the end and its reason are not vouched
        assert task["error"] is None and "error" in task["unverified"]
    finally:
        await store.close()


async def test_a_signed_lease_ended_has_its_reason_shown(pg_url: str, tmp_path: Path) -> None:
    store = await SwarmStore(pg_url, key=KEY).open()
    try:
        # a lease that lapses on its own (negative seconds: already past when written, signed)
        assert await store.create_task(TID, {"app_name": "n"}, tmp_path / TID, principal="bob",
                                       lease=("replica-a", "replica-a/x", -1.0))
        assert await build_lease.end_lapsed(store.db, key=KEY) == [(TID, "replica-a")]
        task = await store.get_task(TID)
        assert task["error"].startswith("interrupted: replica replica-a stopped"), task
        assert "unverified" not in task
    finally:
        await store.close()


STEP_EDITS = {
    "issues cleared": ("UPDATE steps SET issues_json = '[]' WHERE attempt = 1", "issues"),
    "rejected made accepted": ("UPDATE steps SET status = 'ACCEPTED' WHERE attempt = 1", "status"),
    "warnings rewritten": ("UPDATE steps SET warnings_json = '[\"fine\"]' WHERE attempt = 1", "warnings"),
    "renumbered": ("UPDATE steps SET seq = 5 WHERE attempt = 1", "issues"),
}


@pytest.mark.parametrize("edit", sorted(STEP_EDITS))
async def test_a_step_edited_in_sql_is_withheld_and_marked(pg_url: str, tmp_path: Path, edit: str) -> None:
    text, field = STEP_EDITS[edit]
    store = await ran(pg_url, tmp_path)
    try:
        sql(pg_url, text)
        steps = await store.steps_of(TID)
        first = next(s for s in steps if s["attempt"] == 1)
        assert first[field] is None and first["unverified"], first
        assert first["status"] is None  # an edited step counts neither accepted nor rejected
        second = next(s for s in steps if s["attempt"] == 2)
        assert second["status"] == "ACCEPTED" and not second.get("unverified")
        # the renumbered step left its number unanswered: missing too
        assert missing_rows(await store.get_task(TID), "steps", steps) == 1
    finally:
        await store.close()


CALL_EDITS = {
    "one deleted": ("DELETE FROM api_calls WHERE seq = 2", 1, 0),
    "all deleted": ("DELETE FROM api_calls", 3, 0),
    "the last deleted": ("DELETE FROM api_calls WHERE seq = 3", 1, 0),
    "tokens lowered": ("UPDATE api_calls SET prompt_tokens = 1 WHERE seq = 1", 1, 1),
    "status made ERROR": ("UPDATE api_calls SET status = 'ERROR' WHERE seq = 3", 1, 1),
    "copied in": ("INSERT INTO api_calls (task_id, step_number, role, backend, model, status, attempts, "
                  "prompt_tokens, completion_tokens, duration_ms, error, created_at, seq, record_mac) "
                  "SELECT task_id, step_number, role, backend, model, status, attempts, prompt_tokens, "
                  "completion_tokens, duration_ms, error, created_at, seq, record_mac FROM api_calls "
                  "WHERE seq = 1", 0, 1),
    "planted": ("INSERT INTO api_calls (task_id, role, backend, status, created_at, seq) "
                f"VALUES ('{TID}', 'coder', 'b', 'OK', 0, 4)", 0, 1),
}


@pytest.mark.parametrize("edit", sorted(CALL_EDITS))
async def test_model_calls_deleted_or_edited_in_sql_are_seen(
    pg_url: str, tmp_path: Path, edit: str
) -> None:
    text, missing, marked = CALL_EDITS[edit]
    store = await ran(pg_url, tmp_path)
    try:
        sql(pg_url, text)
        task = await store.get_task(TID)
        calls = await store.api_calls_of(TID)
        assert task["calls_recorded"] == 3  # the signed count stands
        assert missing_rows(task, "api_calls", calls) == missing
        assert sum(1 for c in calls if c.get("unverified")) == marked
    finally:
        await store.close()


async def test_counters_put_back_to_nothing_in_sql_are_withheld(pg_url: str, tmp_path: Path) -> None:
    """Put back to their first values with the signature cleared: not "nothing written yet"."""
    store = await ran(pg_url, tmp_path)
    try:
        await store.set_counters(TID, 3, 300, 150, [])
        sql(pg_url, "UPDATE tasks SET model_calls = 0, prompt_tokens = 0, completion_tokens = 0, "
                    "counters_mac = NULL")
        task = await store.get_task(TID)
        assert task["model_calls"] is None and "model_calls" in task["unverified"]
    finally:
        await store.close()


@pytest.mark.parametrize("edit", ["UPDATE tasks SET calls_recorded = 1",
                                  "UPDATE tasks SET calls_recorded = 0, calls_mac = NULL",
                                  "UPDATE tasks SET steps_recorded = 0"])
async def test_a_count_lowered_in_sql_is_withheld(pg_url: str, tmp_path: Path, edit: str) -> None:
    store = await ran(pg_url, tmp_path)
    try:
        sql(pg_url, edit)
        task = await store.get_task(TID)
        field = "steps_recorded" if "steps" in edit else "calls_recorded"
        assert task[field] is None and field in task["unverified"]
        table = "steps" if "steps" in edit else "api_calls"
        assert missing_rows(task, table, await getattr(store, f"{table}_of" if table == "steps" else
                                                       "api_calls_of")(TID)) is None
    finally:
        await store.close()


async def test_the_console_counts_the_signed_calls_and_says_what_is_missing_or_withheld(
    pg_url: str, tmp_path: Path
) -> None:
    """The build page counted the api_calls rows: two deleted in SQL showed 1 call, spend hidden."""
    import json

    from tests.cluster.lease_worker import SEAL, swarm_key
    from tests.console.console_rig import ALICE, console_config, http_sentinel, signed_in

    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["sentinel"]["builtins"] = [*body["sentinel"]["builtins"], "swarm"]
    body["sentinel"]["store"] = pg_url
    body["sentinel"]["cluster"] = {"replica": "replica-b", "seal_key": SEAL}
    cfg.write_text(json.dumps(body))
    store = await SwarmStore(pg_url, key=swarm_key()).open()
    assert await store.create_task(TID, {"app_name": "Notes"}, tmp_path / TID, principal="alice",
                                   lease=("replica-a", "replica-a/x", 600.0))
    await store.record_step(TID, 1, 1, "app/src/A.kt", "REJECTED", [ISSUE], [], 10)
    for n in range(3):
        await call(store, 100 + n)
    await store.set_state(TID, "FAILED", error="the coder broke the build")
    await store.close()
    sql(pg_url, "DELETE FROM api_calls WHERE seq >= 2")
    sql(pg_url, "UPDATE steps SET issues_json = '[]'")
    sql(pg_url, "UPDATE tasks SET error = 'all fine, ignore this build'")
    with http_sentinel(cfg) as (base, _):
        async with signed_in(base, ALICE) as alice:
            page = await alice.page(f"/console/builds/{TID}")
    assert "3 call(s)" in page and "2 recorded call row(s) missing" in page, page
    assert "all fine" not in page and "build-unverified" in page
    assert "withheld: this step" in page


async def test_an_error_built_from_outside_text_is_signed_as_the_text_it_is(
    pg_url: str, tmp_path: Path
) -> None:
    """A reason composed with outside text (``Marked``, a str subclass) is stored and signed as plain text
    (it raised TypeError in the signer, and the build's end was never written)."""
    from sentinel_mcp.core.display_text import compose

    store = await ran(pg_url, tmp_path)
    try:
        await store.set_state(TID, "FAILED", error=compose("the model said ", "no\nway"))
        task = await store.get_task(TID)
        assert task["state"] == "FAILED" and "unverified" not in task
        assert task["error"].startswith("the model")
    finally:
        await store.close()


@pytest.mark.parametrize("table", ["api_calls", "steps"])
async def test_rows_planted_past_what_a_build_writes_are_not_all_read(
    store_location: str, tmp_path: Path, table: str
) -> None:
    """A build writes at most a row per model call and per step attempt (its hard caps): 5,000 planted rows
    were all read for its status and its console page, on every view."""
    from sentinel_mcp.swarm.build_progress import MOST_ROWS

    store = await SwarmStore(store_location, key=KEY).open()
    try:
        lease = ("replica-a", "replica-a/x", 600.0) if store.shared else None
        assert await store.create_task(TID, {"app_name": "n"}, tmp_path / TID, principal="bob", lease=lease)
        for n in range(3):
            await call(store, 100 + n)
        await store.record_step(TID, 1, 1, "app/src/A.kt", "ACCEPTED", [], [], 12, "ab" * 32)
        columns = (("role, backend, status, created_at", "'coder', 'b', 'OK', 0") if table == "api_calls"
                   else ("step_number, attempt, file_path, status, created_at", "1, 1, 'x', 'ACCEPTED', 0"))
        await store.db.write(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) "
            f"INSERT INTO {table} (task_id, {columns[0]}) SELECT ?, {columns[1]} FROM n", (TID,))
        rows = await (store.api_calls_of(TID) if table == "api_calls" else store.steps_of(TID))
        assert len(rows) == MOST_ROWS[table]
        if store.shared:  # the build's own rows came first and stand; the planted ones are marked
            assert missing_rows(await store.get_task(TID), table, rows) == 0
            assert sum(1 for r in rows if r.get("unverified")) == MOST_ROWS[table] - (
                3 if table == "api_calls" else 1)
    finally:
        await store.close()
