"""Rejections, retries, caps, breakers, path safety and fail-open behaviour of the pipeline."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from tests.swarm.support.scripted_model import (
    BLUEPRINT,
    EDITOR_LAYOUT,
    MODEL_STEPS,
    PLAN_PATHS,
    REPOSITORY,
    SPEC,
    answer_for,
    schema_of,
)
from tests.swarm.support.swarm_fixtures import make_service, openai_factory

from sentinel_mcp.swarm.feature_code.strings import resource_text
from sentinel_mcp.swarm.spec import SpecError

pytestmark = pytest.mark.timeout(60)
FIRST_MODEL_STEP = 7  # steps 1-6 are written from the spec; the repository is the coder's first file


def reject(*issues: tuple[str, str]) -> str:
    return json.dumps({"decision": "REJECT", "issues": [{"severity": s, "message": m} for s, m in issues]})


def rows(tmp_path: Path, sql: str, *args):
    return sqlite3.connect(tmp_path / "swarm" / "swarm.db").execute(sql, args).fetchall()


async def run(service, model_server, **kw):
    task_id = await service.submit(SPEC, openai_factory(model_server, **kw.pop("openai", {})), **kw)
    return task_id, await service.wait(task_id)


async def test_rejection_is_retried_with_the_feedback(service, model_server, tmp_path) -> None:
    model_server.script("critic", reject(("MAJOR", "the repository must keep notes in insertion order")))
    task_id, status = await run(service, model_server)
    assert status["state"] == "COMPLETED"
    coder = model_server.calls("coder")
    assert "REJECTED" not in coder[0]["prompt"]
    retry = coder[1]["prompt"]
    assert f"Step {FIRST_MODEL_STEP}: {REPOSITORY}." in retry and "Your previous answer was REJECTED" in retry
    assert "the repository must keep notes in insertion order" in retry
    steps = rows(
        tmp_path,
        "SELECT step_number, attempt, status, issues_json FROM steps WHERE task_id=? ORDER BY id",
        task_id,
    )
    assert [s[:3] for s in steps[: FIRST_MODEL_STEP - 1]] == [
        (n, 1, "ACCEPTED") for n in range(1, FIRST_MODEL_STEP)
    ]
    assert steps[FIRST_MODEL_STEP - 1][:3] == (FIRST_MODEL_STEP, 1, "REJECTED")
    assert "insertion order" in steps[FIRST_MODEL_STEP - 1][3]
    assert steps[FIRST_MODEL_STEP][:3] == (FIRST_MODEL_STEP, 2, "ACCEPTED")


async def test_deterministic_checks_reject_without_asking_the_critic(service, model_server, tmp_path) -> None:
    def bad_screen(body):  # the editor's layout: a placeholder text and two buttons for one action
        answer = answer_for(schema_of(body))
        answer["title"] = "TODO write a title"
        answer["buttons"] = [{"action": "add", "label": "Save"}, {"action": "add", "label": "Store"}]
        return json.dumps(answer)

    model_server.script("coder", lambda body: json.dumps(answer_for(schema_of(body))), bad_screen)
    task_id, status = await run(service, model_server)
    assert status["state"] == "COMPLETED"
    assert len(model_server.calls("critic")) == MODEL_STEPS  # the bad answer never reached the model critic
    retry = model_server.calls("coder")[2]["prompt"]
    assert "placeholder ('TODO' on line 1)" in retry
    assert "two buttons do the same action" in retry
    layout = (tmp_path / "swarm" / task_id / EDITOR_LAYOUT).read_text()
    assert (
        layout.count("<Button") == 1
        and "TODO" not in (tmp_path / "swarm" / task_id / "app/src/main/res/values/strings.xml").read_text()
    )
    step = [s for s in status["steps"] if s["file_path"] == EDITOR_LAYOUT]
    assert [s["status"] for s in step] == ["REJECTED", "ACCEPTED"]


async def test_answers_that_break_the_schema_or_name_what_does_not_exist_are_rejected(
    service, model_server
) -> None:
    def unknown_action(body):
        answer = answer_for(schema_of(body))
        answer["buttons"] = [{"action": "delete_everything", "label": "Go"}]
        answer["inputs"] = [{"field": "text", "hint": "Write"}, {"field": "ghost", "hint": "Boo"}]
        return json.dumps(answer)

    model_server.script(
        "coder", lambda body: json.dumps(answer_for(schema_of(body))), '{"title": 5}', unknown_action
    )
    _task_id, status = await run(service, model_server)
    assert status["state"] == "COMPLETED"
    issues = [
        i["message"]
        for s in status["steps"]
        if s["file_path"] == EDITOR_LAYOUT and s["status"] == "REJECTED"
        for i in s["issues"]
    ]
    assert any("answer does not fit the schema" in m for m in issues)
    assert any("button action 'delete_everything' is not one of add, open_NoteList" in m for m in issues)
    assert any("input for unknown field 'ghost'" in m for m in issues)


async def test_retry_cap_fails_the_task(service, model_server, tmp_path) -> None:
    model_server.script("critic", *[reject(("BLOCKER", f"still wrong {i}")) for i in range(4)])
    task_id, status = await run(service, model_server)
    assert status["state"] == "FAILED"
    assert f"step {FIRST_MODEL_STEP} ({REPOSITORY}) not accepted after 4 attempts" in status["error"]
    assert "still wrong 3" in status["error"]
    assert len(model_server.calls("coder")) == 4  # first attempt + 3 retries
    assert "still wrong 2" in model_server.calls("coder")[3]["prompt"]
    assert not (tmp_path / "swarm" / task_id / REPOSITORY).exists()  # written only after ACCEPT
    assert (tmp_path / "swarm" / task_id / "settings.gradle.kts").exists()  # what was accepted is kept
    assert status["plan"] is not None


@pytest.mark.parametrize(
    "caps, expected",
    [
        ({"max_model_calls": 4}, "model-call limit of 4 reached"),
        ({"max_tokens": 3000}, "token limit of 3000 exceeded"),
        ({"max_steps": 12}, "2 screens planned; at most 1 fit the step cap"),
    ],
)
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
    if "max_steps" in caps:  # the plan is refused whole: nothing is written, no coder is asked
        assert model_server.calls("coder") == [] and status["files"] == []


async def test_caps_can_only_be_lowered(service, model_server) -> None:
    with pytest.raises(ValueError, match="above the cap 25; limits can only be lowered"):
        await service.submit(SPEC, openai_factory(model_server), caps={"max_steps": 26})
    assert await service.list() == []


async def test_oversized_file_is_truncated_with_a_warning(tmp_path, model_server) -> None:
    # a truncated source cannot be whole: the cap truncates (and warns), then the checks reject what is left
    service = make_service(tmp_path, {"limits": {"max_file_bytes": 1024}})
    await service.start()
    try:
        task_id, status = await run(service, model_server)
    finally:
        await service.close()
    assert status["state"] == "FAILED" and "not accepted" in status["error"]
    cut = [s for s in status["steps"] if s["warnings"]]
    assert cut and all(w.endswith("truncated to 1024 bytes") for s in cut for w in s["warnings"])
    assert "delimiters do not balance" in json.dumps(cut[0]["issues"]) or "not well-formed" in json.dumps(
        cut[0]["issues"]
    )
    assert not (tmp_path / "swarm" / task_id / cut[0]["file_path"]).exists()
    assert all((tmp_path / "swarm" / task_id / p).stat().st_size <= 1024 for p in status["files"])


async def test_consecutive_failures_breaker(service, model_server) -> None:
    model_server.script("coder", "", "   \n", "not json at all")
    _task_id, status = await run(service, model_server)
    assert status["state"] == "FAILED"
    assert "circuit breaker: 3 consecutive step failures" in status["error"]
    assert [s["status"] for s in status["steps"]] == ["ACCEPTED"] * (FIRST_MODEL_STEP - 1) + ["FAILED"] * 3
    assert "coder answer is not JSON" in status["steps"][-1]["issues"][0]["message"]


async def test_model_error_breaker(service, model_server, tmp_path) -> None:
    model_server.script("coder", *[{"status": 500}] * 6)
    task_id, status = await run(service, model_server)
    assert status["state"] == "FAILED"
    assert "circuit breaker: 5 model errors within 60 s" in status["error"]
    assert len(model_server.calls("coder")) == 5  # 3 attempts, then 2 more: the breaker stops the 6th
    errors = rows(
        tmp_path, "SELECT role, status, attempts FROM api_calls WHERE status='ERROR' AND task_id=?", task_id
    )
    assert errors == [("coder", "ERROR", 3), ("coder", "ERROR", 2)]


async def test_transient_errors_are_retried_with_backoff(service, model_server, tmp_path) -> None:
    model_server.script("planner", {"status": 429}, {"status": 503}, {"delay": 1.5})
    task_id, status = await run(service, model_server, openai={"timeout": 0.3, "max_attempts": 4})
    assert status["state"] == "COMPLETED"
    assert len(model_server.calls("planner")) == 4
    planner = rows(
        tmp_path, "SELECT status, attempts, error FROM api_calls WHERE role='planner' AND task_id=?", task_id
    )
    assert planner[0][:2] == ("OK", 4)
    assert "HTTP 429" in planner[0][2] and "HTTP 503" in planner[0][2] and "timeout" in planner[0][2]


async def test_permanent_4xx_is_not_retried_and_planner_failure_aborts(service, model_server) -> None:
    model_server.script("planner", {"status": 400})
    _task_id, status = await run(service, model_server)
    assert status["state"] == "FAILED" and "HTTP 400" in status["error"]
    assert len(model_server.requests) == 1


@pytest.mark.parametrize(
    "field, value, why",
    [
        (
            "screens",
            [
                {"feature": "add a note", "screen": "../../Escape", "summary": "x y z"},
                {"feature": "list notes", "screen": "NoteList", "summary": "x y z"},
            ],
            "screens.0.screen",
        ),
        ("entity", "/etc/Passwd", "entity: String should match pattern"),
        ("text_field", 'text"); Runtime.exec("rm', "text_field: String should match pattern"),
        ("more_fields", [{"name": "a/../b", "type": "String"}], "more_fields.0.name"),
        (
            "screens",
            [
                {"feature": "add a note", "screen": "NoteEditor", "summary": "x y z"},
                {"feature": "send my notes to a server", "screen": "Sender", "summary": "x y z"},
            ],
            "features not covered by any screen: list notes",
        ),
    ],
)
async def test_unsafe_or_incomplete_plans_are_refused(
    service, model_server, tmp_path, field, value, why
) -> None:
    # paths are derived from names the blueprint validated: a name that is not an identifier never reaches one
    model_server.script("planner", json.dumps(dict(BLUEPRINT, **{field: value})))
    _task_id, status = await run(service, model_server)
    assert status["state"] == "FAILED"
    assert status["error"].startswith("plan rejected") and why in status["error"]
    assert model_server.calls("coder") == []  # no retry, nothing generated
    assert status["files"] == [] and not (tmp_path / "Escape").exists()
    assert (
        status["plan"]["steps"] == [] and status["plan"]["blueprint"][field] == value
    )  # what was refused, kept


async def test_symlink_escape_refused_at_write_time(service, model_server, tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()

    def plant_link(body):  # while the planner thinks, something plants app -> outside in the workspace
        ws = next(p for p in (tmp_path / "swarm").iterdir() if p.name.startswith("t"))
        (ws / "app").symlink_to(outside, target_is_directory=True)
        return json.dumps(BLUEPRINT)

    model_server.script("planner", plant_link)
    task_id, status = await run(service, model_server)
    assert status["state"] == "FAILED"
    assert "app/build.gradle.kts" in status["error"] and "is a symlink" in status["error"]
    assert list(outside.iterdir()) == []
    assert (tmp_path / "swarm" / task_id / "settings.gradle.kts").exists()  # state kept


async def test_crashing_critic_fails_open(service, model_server) -> None:
    model_server.script("critic", {"status": 500}, "this is not JSON at all")
    _task_id, status = await run(service, model_server, openai={"max_attempts": 1})
    assert status["state"] == "COMPLETED"
    assert [s["status"] for s in status["steps"]] == ["ACCEPTED"] * len(PLAN_PATHS)
    first, second = status["steps"][FIRST_MODEL_STEP - 1], status["steps"][FIRST_MODEL_STEP]
    assert "fail-open" in first["warnings"][0] and "ModelError" in first["warnings"][0]
    assert "CriticOutputError" in second["warnings"][0]
    assert sum("fail-open" in w for w in status["warnings"]) == 2


async def test_failing_verifier_never_blocks_completion(service, model_server) -> None:
    model_server.script("verifier", '{"quality": "great"}')
    _task_id, status = await run(service, model_server)
    assert status["state"] == "COMPLETED"
    assert "verifier failed" in status["report"]["verifier_error"]
    assert status["report"]["verifier"] is None


async def test_invalid_spec_is_refused_with_what_is_wrong(service, model_server) -> None:
    bad = {
        "app_name": "",
        "package_name": "Com.Bad",
        "features": [],
        "min_sdk": 30,
        "target_sdk": 25,
        "colour": "red",
    }
    with pytest.raises(SpecError) as err:
        await service.submit(bad, openai_factory(model_server))
    text = str(err.value)
    for needle in (
        "app_name: String should have at least 1 character",
        "package_name: must be a lowercase dotted",
        "features: List should have at least 1 item",
        "colour: unknown field",
    ):
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
    cap = 1 + 2 * MODEL_STEPS  # the planner, then a coder and a critic call per model step: none left
    _task_id, status = await run(service, model_server, caps={"max_model_calls": cap})
    assert status["state"] == "COMPLETED"
    assert len(model_server.requests) == cap and model_server.calls("verifier") == []
    assert f"model-call limit of {cap} reached" in status["report"]["verifier_error"]
    assert status["report"]["checks"] == [] and len(status["files"]) == len(PLAN_PATHS)


@pytest.mark.parametrize(
    "text",
    [
        "Notes \u202eetirw",  # a right-to-left override: the screen reads what it does not say
        "Save %s and %d",  # format specifiers: getString() of a text that is not a format
        "<b>Add</b> now",  # markup
        "Add\nnow",  # a line break
        "Add \u0007now",  # a control character (strings.xml would not be XML)
        "A" * 40,  # a button label past the schema's 24 characters
    ],
)
async def test_a_text_outside_the_answer_schema_is_rejected_on_backends_that_cannot_constrain_decoding(
    service, model_server, tmp_path, text
) -> None:
    """The schema a coder answers under (texts: plain words and punctuation, bounded) was enforced only
    while decoding on the local model: an answer from the openai or sampling backend was checked by its
    pydantic model alone, so a bidi override, markup, format specifiers, control characters or an over-long
    label went into the app's string resources."""

    def hostile(body):
        answer = answer_for(schema_of(body))
        answer["buttons"] = [dict(answer["buttons"][0], label=text)]
        return json.dumps(answer)

    model_server.script("coder", lambda body: json.dumps(answer_for(schema_of(body))), hostile)
    task_id, status = await run(service, model_server)
    assert status["state"] == "COMPLETED", status["error"]
    strings = (tmp_path / "swarm" / task_id / "app/src/main/res/values/strings.xml").read_text()
    assert resource_text(text) not in strings and "Text for label" in strings
    layout = [s for s in status["steps"] if s["file_path"] == EDITOR_LAYOUT]
    assert [s["status"] for s in layout] == ["REJECTED", "ACCEPTED"]
    assert any("answer does not fit the schema" in i["message"] for i in layout[0]["issues"])


@pytest.mark.parametrize(
    "issue, count",
    [
        (lambda i: {"severity": "MAJOR", "message": f"issue number {i} " + "x" * 90}, 2000),
        (lambda i: f"issue number {i} as a bare string " + "y" * 90, 2000),
        (lambda i: {"severity": "BLOCKER", "description": f"issue number {i} " + "z" * 1900}, 100),
    ],
    ids=["objects", "strings", "aliased and long"],
)
async def test_what_a_model_says_is_kept_within_bounds_in_the_audit(
    service, model_server, issue, count
) -> None:
    """A critic that was only shown its schema (3 issues of 160 characters) answered REJECT with 2,000
    issues: each attempt's row kept them all and every swarm_status returned them (645 KB for two attempts of
    a 291 KB reply); a refused 747 KB blueprint was kept whole in the plan (a refused text only to 4,000
    characters), and a verifier's report had no bound either. Now a verdict keeps its first 5 issues of 300
    characters, a report 5 items each, and a refused blueprint its first 4,000 characters."""
    big = json.dumps({"decision": "REJECT", "issues": [issue(i) for i in range(count)]})
    model_server.script("critic", big, big, big, big)
    _task_id, status = await run(service, model_server)
    kept = [s for s in status["steps"] if s["status"] == "REJECTED"]
    assert kept and all(1 <= len(s["issues"]) <= 5 for s in kept)
    assert all(len(i["message"]) <= 300 for s in kept for i in s["issues"])
    assert len(json.dumps(status, default=str)) < 60_000

    model_server.script("verifier", json.dumps({"warnings": ["w" * 400] + [f"w{i}" for i in range(3000)],
                                                 "missing": [{"x": i} for i in range(3000)],
                                                 "quality_score": 0.5}))
    _task_id, status = await run(service, model_server)
    report = status["report"]["verifier"]
    assert status["state"] == "COMPLETED" and report is not None
    assert len(report["warnings"]) == 5 and len(report["missing"]) == 5
    assert all(len(w) <= 300 for w in report["warnings"])

    screens = [{"feature": "x" * 100, "screen": "Bad", "summary": "y" * 100}] * 3000
    model_server.script("planner", json.dumps(dict(BLUEPRINT, screens=screens)))
    _task_id, status = await run(service, model_server)
    assert status["state"] == "FAILED" and len(json.dumps(status["plan"])) < 5000


async def test_a_model_endpoints_answer_is_read_within_a_bound(service, model_server) -> None:
    """The openai backend read a chat-completions answer whole, whatever its size (a body compressed in any
    encoding included), parsed it and only then counted its tokens by what the endpoint said: a 40 MB answer
    was read and parsed before the token cap refused it, and an endpoint that reported few tokens would have
    passed it on. Now an answer past 4 MiB is refused while it is read, as a model error."""
    import resource

    huge = json.dumps(BLUEPRINT) + " " * 40_000_000
    model_server.script("planner", {"content": huge})
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    _task_id, status = await run(service, model_server)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert status["state"] == "FAILED" and "larger than 4,194,304 bytes" in status["error"], status["error"]
    print(f"peak RSS grew {grown_mb:.0f} MB")
    assert grown_mb < 200, grown_mb  # the scripted server's own copies live in this process too


@pytest.mark.parametrize(
    "usage",
    [{"prompt_tokens": 1, "completion_tokens": 1}, {"prompt_tokens": 0, "completion_tokens": 0},
     {"prompt_tokens": -500000, "completion_tokens": -500000}],
    ids=["one token", "zero", "negative"],
)
async def test_an_endpoint_cannot_spend_past_the_token_cap_by_reporting_few_tokens(
    service, model_server, usage
) -> None:
    """The token cap counted what the endpoint said it used: answers of 3 MB each reported as one token
    were all taken (80 calls of them would be 240 MB under a cap of 200,000 tokens). Now a call counts at
    least what its text estimates (about 4 characters a token)."""
    critic = json.dumps({"decision": "ACCEPT", "issues": []}) + " " * 3_000_000
    model_server.script("critic", *[{"content": critic, "usage": usage}] * 10)
    _task_id, status = await run(service, model_server)
    assert status["state"] == "FAILED", status["error"]
    assert "token limit of 200000 exceeded" in status["error"] and len(model_server.calls("critic")) == 1
