"""The whole pipeline against a real local chat-completions server: files on disk, rows in all tables."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from scripted_model import FILES, PLAN, SPEC
from swarm_fixtures import openai_factory

pytestmark = pytest.mark.timeout(60)


async def test_success_path_writes_files_and_audit_rows(service, model_server, tmp_path: Path) -> None:
    events = []

    async def listener(ev):
        events.append(ev)

    task_id = await service.submit(SPEC, openai_factory(model_server), session="s1", listener=listener)
    status = await service.wait(task_id)

    assert status["state"] == "COMPLETED", status["error"]
    ws = tmp_path / "swarm" / task_id
    for path, text in FILES.items():
        assert (ws / path).read_text() == text
    assert sorted(status["files"]) == sorted(FILES)
    assert not list(ws.rglob("*.tmp"))  # atomic writes leave no temp files

    # one planner, five coder + five critic calls, one verifier: in that order, one at a time
    roles = [r["role"] for r in model_server.requests]
    assert roles == ["planner"] + ["coder", "critic"] * 5 + ["verifier"]
    assert status["model_calls"] == 12
    assert status["report"]["verifier"]["quality_score"] == 0.8
    assert status["report"]["checks"] == []
    assert status["plan"]["steps"][0]["file_path"] == PLAN["steps"][0]["file_path"]
    assert status["session"] == "s1" and status["backend"] == "openai"

    db = sqlite3.connect(tmp_path / "swarm" / "swarm.db")
    # a rollback journal, so the CLI can read while a gateway writes and no -shm is memory-mapped (no SIGBUS)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] in ("delete", "truncate")  # not persistent: a new
    # connection reports the default
    assert not (tmp_path / "swarm" / "swarm.db-shm").exists()
    assert db.execute("SELECT state FROM tasks WHERE task_id=?", (task_id,)).fetchone()[0] == "COMPLETED"
    steps = db.execute("SELECT step_number, attempt, status, bytes FROM steps WHERE task_id=? ORDER BY id",
                       (task_id,)).fetchall()
    assert [(s[0], s[1], s[2]) for s in steps] == [(n, 1, "ACCEPTED") for n in range(1, 6)]
    assert steps[-1][3] == len(FILES[PLAN["steps"][-1]["file_path"]].encode())
    calls = db.execute("SELECT role, status, prompt_tokens, completion_tokens, model FROM api_calls "
                       "WHERE task_id=? ORDER BY id", (task_id,)).fetchall()
    assert len(calls) == 12 and all(c[1] == "OK" and c[2] > 12 and c[3] > 0 and c[4] == "scripted-1"
                                    for c in calls)
    total = db.execute("SELECT prompt_tokens + completion_tokens FROM tasks WHERE task_id=?",
                       (task_id,)).fetchone()[0]
    assert total == sum(c[2] + c[3] for c in calls)

    # the coder of step 5 saw the files it depends on (steps 3 and 4)
    coder5 = model_server.calls("coder")[4]["prompt"]
    assert "--- app/src/main/AndroidManifest.xml ---" in coder5 and "activity_main.xml ---" in coder5
    assert "settings.gradle.kts ---" not in coder5
    assert "Files already in the project: settings.gradle.kts, app/build.gradle.kts," in coder5

    states = [e.state for e in events]
    assert states[0] == "PLANNING" and "EXECUTING" in states and "VERIFYING" in states and states[-1] == "COMPLETED"
    assert events[-1].progress == events[-1].total == 7
    assert not service.lock.path.exists()  # the lock is released when the build ends
