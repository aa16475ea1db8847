"""The whole pipeline against a real local chat-completions server: files on disk, rows in all tables."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from tests.swarm.support.scripted_model import BLUEPRINT, EDITOR_VM, MODEL_STEPS, PLAN_PATHS, SPEC, schema_of
from tests.swarm.support.swarm_fixtures import openai_factory

pytestmark = pytest.mark.timeout(60)


async def test_success_path_writes_files_and_audit_rows(service, model_server, tmp_path: Path) -> None:
    events = []

    async def listener(ev):
        events.append(ev)

    task_id = await service.submit(SPEC, openai_factory(model_server), session="s1", listener=listener)
    status = await service.wait(task_id)

    assert status["state"] == "COMPLETED", status["error"]
    ws = tmp_path / "swarm" / task_id
    assert sorted(status["files"]) == sorted(PLAN_PATHS)
    assert not list(ws.rglob("*.tmp"))  # atomic writes leave no temp files
    # structure from the spec: the Gradle files and the manifest carry the spec's names and levels
    app_build = (ws / "app/build.gradle.kts").read_text()
    assert 'namespace = "com.example.notes"' in app_build and "minSdk = 24" in app_build
    manifest = (ws / "app/src/main/AndroidManifest.xml").read_text()
    assert '".ui.NoteEditorActivity" android:exported="true"' in manifest and "LAUNCHER" in manifest
    assert '".ui.NoteListActivity" android:exported="false"' in manifest
    # code from the model: the view model's functions are the names it chose, its texts string resources
    vm = (ws / EDITOR_VM).read_text()
    replies = [(r["role"], c) for r, c in zip([r for r in model_server.requests if r["status"] == 200],
                                               model_server.replies)]
    answer = json.loads([c for role, c in replies if role == "coder"][2])
    fn = answer["functions"][0]
    assert f"fun {fn['name']}(text: String)" in vm and "R.string.note_editor_add_done" in vm
    strings = (ws / "app/src/main/res/values/strings.xml").read_text()
    assert f">{fn['done']}</string>" in strings and '<string name="app_name">Notes</string>' in strings

    # one planner call, a coder and a critic call per model step, one verifier; scaffold steps call no model
    roles = [r["role"] for r in model_server.requests]
    assert roles == ["planner"] + ["coder", "critic"] * MODEL_STEPS + ["verifier"]
    assert status["model_calls"] == 2 + 2 * MODEL_STEPS
    assert status["report"]["verifier"]["quality_score"] == 0.8
    assert status["report"]["checks"] == []
    assert status["plan"]["blueprint"]["entity"] == BLUEPRINT["entity"]
    assert [s["file_path"] for s in status["plan"]["steps"]] == PLAN_PATHS
    assert status["session"] == "s1" and status["backend"] == "openai"

    db = sqlite3.connect(tmp_path / "swarm" / "swarm.db")
    # a rollback journal, so the CLI can read while a gateway writes and no -shm is memory-mapped (no SIGBUS)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] in ("delete", "truncate")  # not persistent: a new
    # connection reports the default
    assert not (tmp_path / "swarm" / "swarm.db-shm").exists()
    assert db.execute("SELECT state FROM tasks WHERE task_id=?", (task_id,)).fetchone()[0] == "COMPLETED"
    steps = db.execute("SELECT step_number, attempt, status, bytes FROM steps WHERE task_id=? ORDER BY id",
                       (task_id,)).fetchall()
    assert [(s[0], s[1], s[2]) for s in steps] == [(n, 1, "ACCEPTED") for n in range(1, len(PLAN_PATHS) + 1)]
    assert steps[-1][3] == len(manifest.encode())
    calls = db.execute("SELECT role, status, prompt_tokens, completion_tokens, model FROM api_calls "
                       "WHERE task_id=? ORDER BY id", (task_id,)).fetchall()
    assert len(calls) == 2 + 2 * MODEL_STEPS and all(
        c[1] == "OK" and c[2] > 12 and c[3] > 0 and c[4] == "scripted-1" for c in calls
    )
    total = db.execute(
        "SELECT prompt_tokens + completion_tokens FROM tasks WHERE task_id=?", (task_id,)
    ).fetchone()[0]
    assert total == sum(c[2] + c[3] for c in calls)

    # each step's schema is built from what is decided: the view model's has one function per action of
    # its screen (the screen's answer has one button, add, and a list without a click action)
    coder = model_server.calls("coder")
    vm_schema = schema_of(coder[2]["body"])
    assert [f["properties"]["action"] for f in vm_schema["properties"]["functions"]["prefixItems"]] == [
        {"const": "add"}
    ]
    assert "The screen: title" in coder[2]["prompt"] and "(add)" in coder[2]["prompt"]
    # a screen may only offer what the repository has: this repository was given no extra operations
    ui_schema = schema_of(coder[1]["body"])
    assert ui_schema["properties"]["buttons"]["items"]["properties"]["action"]["enum"] == [
        "add",
        "open_NoteList",
    ]

    states = [e.state for e in events]
    assert (
        states[0] == "PLANNING"
        and "EXECUTING" in states
        and "VERIFYING" in states
        and states[-1] == "COMPLETED"
    )
    assert events[-1].progress == events[-1].total == len(PLAN_PATHS) + 2
    assert not service.lock.path.exists()  # the lock is released when the build ends
