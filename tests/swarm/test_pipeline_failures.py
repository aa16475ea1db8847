"""Rejections, retries, caps, breakers, path safety and fail-open behaviour of the pipeline."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from scripted_model import FILES, PLAN, SPEC
from swarm_fixtures import make_service, openai_factory

from sentinel_mcp.swarm.spec import SpecError

pytestmark = pytest.mark.timeout(60)
ACTIVITY = "app/src/main/java/com/example/notes/MainActivity.kt"


def reject(*issues: tuple[str, str]) -> str:
    return json.dumps({"decision": "REJECT", "issues": [{"severity": s, "message": m} for s, m in issues]})


def rows(tmp_path: Path, sql: str, *args):
    return sqlite3.connect(tmp_path / "swarm" / "swarm.db").execute(sql, args).fetchall()


async def run(service, model_server, **kw):
    task_id = await service.submit(SPEC, openai_factory(model_server, **kw.pop("openai", {})), **kw)
    return task_id, await service.wait(task_id)


async def test_rejection_is_retried_with_the_feedback(service, model_server, tmp_path) -> None:
    model_server.script("critic", reject(("MAJOR", "settings must name the root project Notes-Pro")))
    task_id, status = await run(service, model_server)
    assert status["state"] == "COMPLETED"
    coder = model_server.calls("coder")
    assert "REJECTED" not in coder[0]["prompt"]
    retry = coder[1]["prompt"]
    assert "settings.gradle.kts" in retry and "Your previous attempt was REJECTED" in retry
    assert "MAJOR: settings must name the root project Notes-Pro" in retry
    steps = rows(tmp_path, "SELECT step_number, attempt, status, issues_json FROM steps WHERE task_id=? ORDER BY id",
                 task_id)
    assert steps[0][:3] == (1, 1, "REJECTED") and "Notes-Pro" in steps[0][3]
    assert steps[1][:3] == (1, 2, "ACCEPTED")


async def test_deterministic_checks_reject_without_asking_the_critic(service, model_server, tmp_path) -> None:
    bad = FILES[ACTIVITY].replace("super.onCreate(savedInstanceState)", "// TODO restore state")
    model_server.script("coder", FILES["settings.gradle.kts"], FILES["app/build.gradle.kts"],
                        FILES["app/src/main/AndroidManifest.xml"], FILES["app/src/main/res/layout/activity_main.xml"],
                        bad.replace("package com.example.notes", "package com.example.wrong"))
    task_id, status = await run(service, model_server)
    assert status["state"] == "COMPLETED"
    assert len(model_server.calls("critic")) == 5  # the bad attempt never reached the model critic
    retry = model_server.calls("coder")[5]["prompt"]
    assert "placeholder ('TODO' on line" in retry
    assert "package com.example.wrong does not match its path (expected com.example.notes)" in retry
    assert (tmp_path / "swarm" / task_id / ACTIVITY).read_text() == FILES[ACTIVITY]


async def test_retry_cap_fails_the_task(service, model_server, tmp_path) -> None:
    model_server.script("critic", *[reject(("BLOCKER", f"still wrong {i}")) for i in range(4)])
    task_id, status = await run(service, model_server)
    assert status["state"] == "FAILED"
    assert "step 1 (settings.gradle.kts) not accepted after 4 attempts" in status["error"]
    assert "still wrong 3" in status["error"]
    assert len(model_server.calls("coder")) == 4  # first attempt + 3 retries
    assert "still wrong 2" in model_server.calls("coder")[3]["prompt"]
    assert not (tmp_path / "swarm" / task_id / "settings.gradle.kts").exists()  # written only after ACCEPT
    assert status["plan"] is not None


@pytest.mark.parametrize("caps, expected", [
    ({"max_model_calls": 4}, "model-call limit of 4 reached"),
    ({"max_tokens": 3000}, "token limit of 3000 exceeded"),
    ({"max_steps": 3}, "plan has 5 steps; it must have 1 to 3"),
])
async def test_caps_abort_the_task(service, model_server, tmp_path, caps, expected) -> None:
    task_id, status = await run(service, model_server, caps=caps)
    assert status["state"] == "FAILED" and expected in status["error"]
    calls = rows(tmp_path, "SELECT prompt_tokens + completion_tokens FROM api_calls WHERE task_id=?", task_id)
    if "max_model_calls" in caps:
        assert len(model_server.requests) == len(calls) == 4
    if "max_tokens" in caps:
        used = sum(c[0] for c in calls)
        assert used > 3000 and used - calls[-1][0] <= 3000  # checked after each call
        assert status["prompt_tokens"] + status["completion_tokens"] == used


async def test_caps_can_only_be_lowered(service, model_server) -> None:
    with pytest.raises(ValueError, match="above the cap 25; limits can only be lowered"):
        await service.submit(SPEC, openai_factory(model_server), caps={"max_steps": 26})
    assert await service.list() == []


async def test_oversized_file_is_truncated_with_a_warning(tmp_path, model_server) -> None:
    service = make_service(tmp_path, {"limits": {"max_file_bytes": 1024}})
    await service.start()
    try:
        model_server.script("coder", FILES["settings.gradle.kts"] + "// padding line\n" * 200)
        task_id, status = await run(service, model_server)
    finally:
        await service.close()
    assert status["state"] == "COMPLETED"
    assert (tmp_path / "swarm" / task_id / "settings.gradle.kts").stat().st_size == 1024
    assert "settings.gradle.kts truncated to 1024 bytes" in status["warnings"]
    assert status["steps"][0]["warnings"] == ["settings.gradle.kts truncated to 1024 bytes"]


async def test_consecutive_failures_breaker(service, model_server) -> None:
    model_server.script("coder", "", "   \n", "")
    _task_id, status = await run(service, model_server)
    assert status["state"] == "FAILED"
    assert "circuit breaker: 3 consecutive step failures" in status["error"]
    assert [s["status"] for s in status["steps"]] == ["FAILED"] * 3


async def test_model_error_breaker(service, model_server, tmp_path) -> None:
    model_server.script("coder", *[{"status": 500}] * 6)
    task_id, status = await run(service, model_server)
    assert status["state"] == "FAILED"
    assert "circuit breaker: 5 model errors within 60 s" in status["error"]
    assert len(model_server.calls("coder")) == 5  # 3 attempts, then 2 more: the breaker stops the 6th
    errors = rows(tmp_path, "SELECT role, status, attempts FROM api_calls WHERE status='ERROR' AND task_id=?", task_id)
    assert errors == [("coder", "ERROR", 3), ("coder", "ERROR", 2)]


async def test_transient_errors_are_retried_with_backoff(service, model_server, tmp_path) -> None:
    model_server.script("planner", {"status": 429}, {"status": 503}, {"delay": 1.5})
    task_id, status = await run(service, model_server, openai={"timeout": 0.3, "max_attempts": 4})
    assert status["state"] == "COMPLETED"
    assert len(model_server.calls("planner")) == 4
    planner = rows(tmp_path, "SELECT status, attempts, error FROM api_calls WHERE role='planner' AND task_id=?",
                   task_id)
    assert planner[0][:2] == ("OK", 4)
    assert "HTTP 429" in planner[0][2] and "HTTP 503" in planner[0][2] and "timeout" in planner[0][2]


async def test_permanent_4xx_is_not_retried_and_planner_failure_aborts(service, model_server) -> None:
    model_server.script("planner", {"status": 400})
    _task_id, status = await run(service, model_server)
    assert status["state"] == "FAILED" and "HTTP 400" in status["error"]
    assert len(model_server.requests) == 1


@pytest.mark.parametrize("bad_path, why", [
    ("../escape.kt", "contains '..'"),
    ("app/../../escape.xml", "contains '..'"),
    ("/etc/passwd.xml", "is absolute"),
])
async def test_unsafe_plan_paths_are_refused(service, model_server, tmp_path, bad_path, why) -> None:
    plan = json.loads(json.dumps(PLAN))
    plan["steps"][3]["file_path"] = bad_path
    plan["steps"][3]["file_type"] = "text"
    model_server.script("planner", json.dumps(plan))
    _task_id, status = await run(service, model_server)
    assert status["state"] == "FAILED"
    assert status["error"].startswith("plan rejected") and why in status["error"]
    assert model_server.calls("coder") == []  # no retry, nothing generated
    assert not (tmp_path / "escape.kt").exists() and status["files"] == []


async def test_symlink_escape_refused_at_write_time(service, model_server, tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()

    def plant_link(body):  # while step 1 is being coded, something plants app -> outside
        ws = next(p for p in (tmp_path / "swarm").iterdir() if p.name.startswith("t"))
        (ws / "app").symlink_to(outside, target_is_directory=True)
        return FILES["settings.gradle.kts"]

    model_server.script("coder", plant_link)
    task_id, status = await run(service, model_server)
    assert status["state"] == "FAILED"
    assert "app/build.gradle.kts" in status["error"] and "is a symlink" in status["error"]
    assert list(outside.iterdir()) == []
    assert (tmp_path / "swarm" / task_id / "settings.gradle.kts").exists()  # state kept


async def test_crashing_critic_fails_open(service, model_server) -> None:
    model_server.script("critic", {"status": 500}, "this is not JSON at all")
    _task_id, status = await run(service, model_server, openai={"max_attempts": 1})
    assert status["state"] == "COMPLETED"
    assert [s["status"] for s in status["steps"]] == ["ACCEPTED"] * 5
    assert "fail-open" in status["steps"][0]["warnings"][0] and "ModelError" in status["steps"][0]["warnings"][0]
    assert "CriticOutputError" in status["steps"][1]["warnings"][0]
    assert sum("fail-open" in w for w in status["warnings"]) == 2


async def test_failing_verifier_never_blocks_completion(service, model_server) -> None:
    model_server.script("verifier", '{"quality": "great"}')
    _task_id, status = await run(service, model_server)
    assert status["state"] == "COMPLETED"
    assert "verifier failed" in status["report"]["verifier_error"]
    assert status["report"]["verifier"] is None


async def test_invalid_spec_is_refused_with_what_is_wrong(service, model_server) -> None:
    bad = {"app_name": "", "package_name": "Com.Bad", "features": [], "min_sdk": 30, "target_sdk": 25,
           "colour": "red"}
    with pytest.raises(SpecError) as err:
        await service.submit(bad, openai_factory(model_server))
    text = str(err.value)
    for needle in ("app_name: String should have at least 1 character", "package_name: must be a lowercase dotted",
                   "features: List should have at least 1 item", "colour: unknown field"):
        assert needle in text
    with pytest.raises(SpecError, match="target_sdk \\(25\\) must be >= min_sdk \\(30\\)"):
        await service.submit(dict(SPEC, min_sdk=30, target_sdk=25), openai_factory(model_server))
    with pytest.raises(SpecError, match="not valid JSON"):
        await service.submit("{nope", openai_factory(model_server))
    assert await service.list() == [] and model_server.requests == []


async def test_permanent_refusal_of_the_coder_aborts_at_once(service, model_server) -> None:
    model_server.script("coder", {"status": 401})
    _task_id, status = await run(service, model_server)
    assert status["state"] == "FAILED" and "HTTP 401" in status["error"]
    assert len(model_server.calls("coder")) == 1 and model_server.calls("critic") == []


async def test_verifier_over_budget_is_skipped_and_the_build_completes(service, model_server) -> None:
    _task_id, status = await run(service, model_server, caps={"max_model_calls": 11})
    assert status["state"] == "COMPLETED"
    assert len(model_server.requests) == 11 and model_server.calls("verifier") == []
    assert "model-call limit of 11 reached" in status["report"]["verifier_error"]
    assert status["report"]["checks"] == [] and len(status["files"]) == 5
