"""The stores that used to open SQLite themselves (the agent's traces, the assist inbox, notes, the passage
index) now live behind the storage seam: files from before are taken over as they were, a store that cannot
be written refuses, bounds hold across processes, and nothing outside ``storage/`` opens SQLite."""

from __future__ import annotations

import ast
import asyncio
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from device_tools.modules.notes import NoteStore
from sentinel_mcp.a2a.assist_inbox import MAX_OPEN, AssistInbox, InboxFull
from sentinel_mcp.agent.trace_store import TraceStore, TraceStoreError
from sentinel_mcp.storage import StorageError
from sentinel_mcp.storage.sql_script import split_statements
from tests.support.source_ast import parsed

ROOT = Path(__file__).resolve().parents[2]

# what the agent kept before the seam: its own connection, WAL, foreign keys with cascading deletes
OLD_AGENT = """
PRAGMA journal_mode=WAL;
CREATE TABLE agent_runs (run_id TEXT PRIMARY KEY, principal TEXT NOT NULL, session TEXT NOT NULL,
    goal TEXT NOT NULL, status TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '', answer TEXT,
    started REAL NOT NULL, finished REAL, steps INTEGER NOT NULL DEFAULT 0, tokens INTEGER NOT NULL DEFAULT 0,
    model TEXT NOT NULL DEFAULT '');
CREATE TABLE agent_steps (run_id TEXT NOT NULL REFERENCES agent_runs (run_id) ON DELETE CASCADE,
    n INTEGER NOT NULL, at REAL NOT NULL, record TEXT NOT NULL, PRIMARY KEY (run_id, n));
CREATE TABLE agent_reflections (run_id TEXT NOT NULL REFERENCES agent_runs (run_id) ON DELETE CASCADE,
    n INTEGER NOT NULL, at TEXT NOT NULL, kind TEXT NOT NULL, signs TEXT NOT NULL, text TEXT NOT NULL);
INSERT INTO agent_runs (run_id, principal, session, goal, status, started) VALUES
    ('old', 'alice', 's', 'read my sms', 'completed', 1.0);
INSERT INTO agent_steps VALUES ('old', 1, 1.5, '{"summary": "home"}');
INSERT INTO agent_reflections VALUES ('old', 1, '2026-01-01T00:00:00Z', 'retry', '["slow"]', 'again');
"""
OLD_ASSIST = """
PRAGMA journal_mode=WAL;
CREATE TABLE assist_requests (id TEXT PRIMARY KEY, at TEXT NOT NULL, from_agent TEXT NOT NULL,
    reason TEXT NOT NULL, questions TEXT NOT NULL, context TEXT, channel TEXT, task_id TEXT,
    status TEXT NOT NULL DEFAULT 'open', reply TEXT, replied_at TEXT);
CREATE TABLE chat_bridges (channel TEXT PRIMARY KEY, owner TEXT NOT NULL, target TEXT NOT NULL,
    opened_at TEXT NOT NULL, relayed INTEGER NOT NULL DEFAULT 0);
INSERT INTO assist_requests (id, at, from_agent, reason, questions) VALUES
    ('har-old', '2026-01-01T00:00:00Z', 'peer', 'which seat?', '["aisle or window?"]');
"""
OLD_NOTES = """
CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, body TEXT NOT NULL DEFAULT '',
    tags TEXT NOT NULL DEFAULT '', created TEXT NOT NULL);
INSERT INTO notes (title, body, created) VALUES ('groceries', 'milk', '2026-01-01T00:00:00+00:00');
"""


def _old_file(path: Path, script: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.executescript(script)
    db.commit()
    db.close()


def _versions(path: Path) -> dict[str, int]:
    db = sqlite3.connect(path)
    try:
        return dict(db.execute("SELECT store, version FROM storage_schema WHERE store NOT LIKE '$%'"))
    finally:
        db.close()


async def test_files_from_before_the_seam_are_taken_over_as_they_were(tmp_path: Path) -> None:
    _old_file(tmp_path / "agent.db", OLD_AGENT)
    _old_file(tmp_path / "assist.db", OLD_ASSIST)
    _old_file(tmp_path / "notes.sqlite3", OLD_NOTES)
    async with TraceStore(tmp_path / "agent.db") as traces:
        run = await traces.run("alice", "old")
        assert run is not None and run["goal"] == "read my sms"
        assert run["trace"] == [{"n": 1, "at": 1.5, "summary": "home"}]
        assert [r["text"] for r in run["reflections"]] == ["again"]
        await traces.start_run("new", "alice", "s", "call mum", "m")
        assert [r["run_id"] for r in await traces.runs("alice")] == ["new", "old"]
    inbox = AssistInbox(tmp_path / "assist.db")
    try:
        assert [r["id"] for r in inbox.open_requests()] == ["har-old"]
        assert inbox.answer("har-old", "aisle") and not inbox.answer("har-old", "window")  # counted once
    finally:
        await asyncio.to_thread(inbox.release)
    notes = NoteStore(tmp_path / "notes.sqlite3")
    assert [n["title"] for n in notes.list("owner", None, 10)] == ["groceries"]
    assert notes.add("owner", "call", "", []) == 2
    assert _versions(tmp_path / "agent.db") == {"agent": 3}  # taken over, reflections numbered, rows signed
    assert _versions(tmp_path / "assist.db") == {"assist": 2}  # taken over, then the claimed id its column
    assert _versions(tmp_path / "notes.sqlite3") == {"notes": 3}  # taken over, then its notes given owners


async def test_old_runs_go_with_their_steps_and_reflections(tmp_path: Path) -> None:
    # the seam does not turn on SQLite's foreign keys: the trim deletes a run's rows itself
    async with TraceStore(tmp_path / "agent.db", keep=2) as traces:
        for i in range(4):
            await traces.start_run(f"r{i}", "alice", "s", f"goal {i}", "m")
            await traces.record_step(f"r{i}", 1, {"summary": f"step {i}"})
            await traces.record_reflection(f"r{i}", 1, "retry", ["slow"], f"again {i}")
            await asyncio.sleep(0.01)  # distinct start times
        await traces.start_run("r4", "alice", "s", "goal 4", "m")
        kept = [r["run_id"] for r in await traces.runs("alice", 10)]
        assert kept == ["r4", "r3"]
        for table in ("agent_steps", "agent_reflections"):
            rows = await traces.db.query(f"SELECT DISTINCT run_id FROM {table} ORDER BY run_id")
            assert rows == [("r3",)], table


async def test_a_trace_that_cannot_be_written_stops_the_run(tmp_path: Path) -> None:
    traces = await TraceStore(tmp_path / "agent.db").open()
    try:
        await traces.start_run("r1", "alice", "s", "goal", "m")
        with pytest.raises(TraceStoreError):  # the same run twice: a refused row is the run's end too
            await traces.start_run("r1", "alice", "s", "goal", "m")
        os.unlink(tmp_path / "agent.db")  # the file is gone under a running agent
        with pytest.raises(TraceStoreError, match="could not be written"):
            await traces.record_step("r1", 1, {"summary": "tap"})
    finally:
        await traces.close()
    with pytest.raises(TraceStoreError, match="not open"):
        await traces.record_step("r1", 2, {"summary": "tap"})


def test_a_note_that_cannot_be_stored_is_refused_not_lost(tmp_path: Path) -> None:
    notes = NoteStore(tmp_path / "notes.sqlite3")
    notes.add("owner", "kept", "", [])
    os.unlink(tmp_path / "notes.sqlite3")
    with pytest.raises(StorageError):
        notes.add("owner", "lost", "", [])
    assert notes.add("owner", "again", "", []) == 1  # the store re-creates the file with its schema


@pytest.mark.parametrize("query", ["%", "_", "\\", "%%", "\\%", "'; DROP TABLE notes; --", "\x00"])
def test_a_search_for_wildcards_matches_only_that_text(tmp_path: Path, query: str) -> None:
    notes = NoteStore(tmp_path / "notes.sqlite3")
    notes.add("owner", "plain", "nothing special", [])
    assert notes.list("owner", query, 10) == []
    assert [n["title"] for n in notes.list("owner", None, 10)] == ["plain"]


ADDER = """
import sys
from pathlib import Path
from sentinel_mcp.a2a.assist_inbox import AssistInbox, InboxFull

inbox = AssistInbox(Path(sys.argv[1]))
added = 0
for i in range(int(sys.argv[2])):
    try:
        inbox.add(from_agent=f"peer-{sys.argv[3]}-{i % 20}", reason="help", questions=["?"])
        added += 1
    except InboxFull:
        pass
inbox.release()
print(added)
"""


def test_the_open_requests_bound_holds_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "assist.db"
    AssistInbox(path).release()  # the schema exists before the writers race
    each = MAX_OPEN * 3 // 4
    procs = [
        subprocess.Popen([sys.executable, "-c", ADDER, str(path), str(each), str(n)], cwd=ROOT,
                         stdout=subprocess.PIPE, text=True)
        for n in range(2)
    ]
    added = [int(p.communicate(timeout=300)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sum(added) == MAX_OPEN  # never more, whichever process got there first
    inbox = AssistInbox(path)
    try:
        assert len(inbox.open_requests(limit=MAX_OPEN * 2)) == MAX_OPEN
        with pytest.raises(InboxFull, match=str(MAX_OPEN)):
            inbox.add(from_agent="a-new-peer", reason="one more", questions=["?"])
    finally:
        inbox.release()


def test_statements_end_where_sqlite_says_they_end() -> None:
    script = """
    CREATE TABLE t (x TEXT DEFAULT ';');  -- a comment; with a semicolon
    CREATE TRIGGER t_ai AFTER INSERT ON t BEGIN
        INSERT INTO t (x) SELECT 'a;b' WHERE 0;
        DELETE FROM t WHERE 0;
    END;
    INSERT INTO t VALUES ('it''s; fine')
    """
    got = split_statements(script)
    assert len(got) == 3 and got[1].endswith("END")  # the trigger whole, its comment before it
    db = sqlite3.connect(":memory:")
    for statement in got:
        db.execute(statement)
    assert db.execute("SELECT x FROM t").fetchall() == [("it's; fine",)]


# where SQLite is opened: the seam, and nowhere else in the product
SEAM = ROOT / "sentinel_mcp" / "storage"


def _opens_sqlite(path: Path) -> list[str]:
    found = []
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import) and any(a.name == "aiosqlite" for a in node.names):
            found.append(f"{path}:{node.lineno} imports aiosqlite")
        if isinstance(node, ast.ImportFrom) and node.module in ("aiosqlite", "sqlite3") and any(
            a.name == "connect" for a in node.names
        ):
            found.append(f"{path}:{node.lineno} imports connect")
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "connect"
            and isinstance(node.value, ast.Name)
            and node.value.id in ("sqlite3", "aiosqlite")
        ):
            found.append(f"{path}:{node.lineno} calls {node.value.id}.connect")
    return found


def test_nothing_outside_the_storage_seam_opens_sqlite() -> None:
    product = [*(ROOT / "sentinel_mcp").rglob("*.py"), *(ROOT / "device_tools").rglob("*.py")]
    outside = [f for p in product if SEAM not in p.parents for f in _opens_sqlite(p)]
    assert outside == []
    assert _opens_sqlite(SEAM / "sqlite.py")  # the check sees a connect where there is one
