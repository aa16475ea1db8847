"""The deterministic parts on their own: path safety, spec and plan validation, checks, breakers, logs."""

from __future__ import annotations

import copy
import logging
from pathlib import Path

import pytest
from tests.swarm.support.hand_project import FILES, PLAN
from tests.swarm.support.scripted_model import SPEC

from sentinel_mcp.swarm.breakers import BreakerTripped, ConsecutiveFailureBreaker, ModelErrorBreaker
from sentinel_mcp.swarm.checks import (
    check_file,
    check_project,
    expected_kotlin_package,
    unbalanced_delimiters,
)
from sentinel_mcp.swarm.limits import Budget, LimitExceeded, Limits
from sentinel_mcp.swarm.logging_setup import redact, setup_swarm_logging
from sentinel_mcp.swarm.path_safety import UnsafePathError, check_relative_path, resolve_inside
from sentinel_mcp.swarm.plan import PlanError, parse_plan, validate_plan
from sentinel_mcp.swarm.spec import parse_spec
from sentinel_mcp.swarm.workspace import Workspace


@pytest.mark.parametrize(
    "path",
    [
        "/abs.kt",
        "../x.kt",
        "a/../../x.kt",
        "a//b.kt",
        "./a.kt",
        "a\\b.kt",
        "C:/x.kt",
        "~/x.kt",
        "a/b c.kt",
        "a/\x00.kt",
        "",
        "a/" + "b" * 300,
        # names a build could only make with odd characters: a newline anywhere (also last, where re's $
        # would match), a direction override, a letter outside ASCII, a leading dash or dot, a trailing dot
        "a/b\n.kt",
        "a/b.kt\n",
        "a/\u202ecod.kt",
        "a/caf\u00e9.kt",
        "a/-rf.kt",
        "a/.hidden.kt",
        "a./b.kt",
    ],
)
def test_unsafe_paths_are_refused(path: str) -> None:
    with pytest.raises(UnsafePathError):
        check_relative_path(path)


def test_safe_path_and_symlink_checks(tmp_path: Path) -> None:
    assert str(check_relative_path("app/src/main/AndroidManifest.xml")) == "app/src/main/AndroidManifest.xml"
    ws = Workspace(tmp_path / "ws").create()
    ws.write_file("app/x.txt", "hello\n")
    assert ws.read_file("app/x.txt") == "hello\n" and ws.list_files() == ["app/x.txt"]
    (tmp_path / "outside").mkdir()
    (ws.root / "link").symlink_to(tmp_path / "outside")
    (ws.root / "file-link.txt").symlink_to(tmp_path / "outside" / "target.txt")
    for rel in ("link/x.txt", "file-link.txt"):
        with pytest.raises(UnsafePathError, match="is a symlink"):
            ws.write_file(rel, "escape")
    assert list((tmp_path / "outside").iterdir()) == []
    assert ws.list_files() == ["app/x.txt"]  # symlinks are not listed
    with pytest.raises(UnsafePathError):
        resolve_inside(ws.root, "app/x.txt/y.txt")  # through a file


def test_a_hard_link_in_the_workspace_is_replaced_never_written_through(tmp_path: Path) -> None:
    """A file of the workspace hard-linked to one outside (planted, or made by a tool) is one inode: writing
    into it would change the outside file. A write replaces the name with a new file instead."""
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    ws = Workspace(tmp_path / "ws").create()
    (ws.root / "app").mkdir()
    (ws.root / "app" / "x.txt").hardlink_to(outside)
    ws.write_file("app/x.txt", "generated\n")
    assert outside.read_text() == "precious\n"
    assert ws.read_file("app/x.txt") == "generated\n" and (ws.root / "app" / "x.txt").stat().st_nlink == 1


def test_plan_validation_collects_every_problem() -> None:
    spec = parse_spec(SPEC)
    plan = copy.deepcopy(PLAN)
    plan["steps"][1]["step_number"] = 1  # duplicate
    plan["steps"][2]["dependencies"] = [9]  # not earlier
    plan["steps"][3]["description"] = "A layout"  # the feature "list notes" no longer named
    plan["steps"][3]["features"] = []
    plan["steps"][0]["file_path"] = "settings.txt"
    with pytest.raises(PlanError) as err:
        validate_plan(parse_plan(plan), spec, 25)
    problems = err.value.problems
    assert "step 1: duplicate step number" in problems
    assert "step 3: dependency 9 is not an earlier step" in problems
    assert "features not covered by any step: list notes" in problems
    assert "no step produces settings.gradle(.kts)" in problems
    assert "step 1: file_type gradle does not match settings.txt" in problems
    assert validate_plan(parse_plan(PLAN), spec, 25)  # the good plan passes
    assert len(parse_plan(PLAN["steps"]).steps) == 5  # a bare list is accepted
    with pytest.raises(PlanError, match="steps"):
        parse_plan({"nothing": 1})
    assert (
        parse_plan({"steps": [dict(PLAN["steps"][4], file_type="Kotlin source")]}).steps[0].file_type
        == "kotlin"
    )


def test_file_checks() -> None:
    assert check_file("a.xml", "xml", "<a><b></a>")[0].message.startswith("XML is not well-formed")
    assert check_file("x.kt", "kotlin", "")[0].message == "file is empty"
    assert expected_kotlin_package("app/src/main/java/com/example/notes/ui/A.kt") == "com.example.notes.ui"
    assert expected_kotlin_package("A.kt") is None
    assert unbalanced_delimiters("fun f() { println(\"}\") /* ) */ val c = '{' }") is None
    assert unbalanced_delimiters("fun f() { (]") == "unexpected ']' on line 1"
    assert unbalanced_delimiters('val s = """\n{\n"""\nfun g() {}') is None
    assert unbalanced_delimiters('val s = "open') == "unterminated string literal on line 1"
    text = FILES["app/src/main/java/com/example/notes/MainActivity.kt"]
    assert check_file("app/src/main/java/com/example/notes/MainActivity.kt", "kotlin", text) == []
    bad = check_file("app/src/main/java/com/example/other/MainActivity.kt", "kotlin", text)
    assert [i.message for i in bad] == [
        "package com.example.notes does not match its path (expected com.example.other)"
    ]


def test_project_checks_manifest_against_sources() -> None:
    assert check_project(FILES, "com.example.notes") == []
    files = dict(FILES)
    files["app/src/main/AndroidManifest.xml"] = files["app/src/main/AndroidManifest.xml"].replace(
        ".MainActivity", ".SettingsActivity"
    )
    del files["settings.gradle.kts"]
    messages = [i.message for i in check_project(files, "com.example.notes")]
    assert "settings.gradle(.kts) is missing" in messages
    assert (
        "activity .SettingsActivity (com.example.notes.SettingsActivity) is not declared in any Kotlin source"
        in messages
    )
    assert any(
        "differs from the spec's com.example.other" in m
        for m in (i.message for i in check_project(FILES, "com.example.other"))
    )


def test_limits_only_lower_and_budget_enforces() -> None:
    with pytest.raises(ValueError, match="limits can only be lowered"):
        Limits().lowered(max_tokens=200_001)
    with pytest.raises(ValueError):
        Limits(max_retries=4)
    # a caller's cap is a number as sent: a truth value or a text is refused, never read as 1 or 3 (rt-swarm)
    for loose in ({"max_steps": True}, {"max_model_calls": False}, {"max_tokens": "3"},
                  {"max_wall_seconds": "60"}, {"max_steps": 2.0}, {"max_wall_seconds": float("nan")}):
        with pytest.raises(ValueError):
            Limits().lowered(**loose)
    assert Limits().lowered(max_steps=3, max_wall_seconds=60).max_wall_seconds == 60.0
    assert Limits().lowered(max_wall_seconds=0.5).max_wall_seconds == 0.5  # seconds need not be whole
    budget = Budget(Limits().lowered(max_model_calls=2, max_tokens=100))
    budget.before_model_call()
    budget.after_model_call(40, 50)
    budget.before_model_call()
    with pytest.raises(LimitExceeded, match="token limit of 100 exceeded \\(101 used\\)"):
        budget.after_model_call(1, 10)
    with pytest.raises(LimitExceeded, match="model-call limit of 2"):
        budget.before_model_call()


def test_breakers() -> None:
    consecutive = ConsecutiveFailureBreaker(3)
    consecutive.record_failure("a")
    consecutive.record_failure("b")
    consecutive.record_success()
    consecutive.record_failure("c")
    consecutive.record_failure("d")
    with pytest.raises(BreakerTripped, match="3 consecutive"):
        consecutive.record_failure("e")
    now = [0.0]
    errors = ModelErrorBreaker(5, 60.0, clock=lambda: now[0])
    for t in (0, 10, 20, 30):
        now[0] = t
        errors.record_error("x")
    now[0] = 65.0  # the error at t=0 left the window: 4 within 60 s, no trip
    errors.record_error("x")
    now[0] = 66.0
    with pytest.raises(BreakerTripped, match="5 model errors within 60 s"):
        errors.record_error("y")


def test_logs_rotate_daily_and_redact_personal_data(tmp_path: Path) -> None:
    path = setup_swarm_logging(tmp_path / "logs")
    assert setup_swarm_logging(tmp_path / "logs") == path  # idempotent
    log = logging.getLogger("sentinel.swarm")
    handler = next(h for h in log.handlers if getattr(h, "baseFilename", "") == str(path))
    assert handler.when == "MIDNIGHT" and handler.backupCount == 30
    log.warning(
        "user %s called from +49 170 1234567 with key sk-abcdefghijklmnopqrstuv and %s",
        "jane.doe@example.org",
        "Bearer abc.def.ghi.jkl",
    )
    handler.flush()
    text = path.read_text()
    for secret in ("jane.doe@example.org", "170 1234567", "sk-abcdefghijklmnopqrstuv", "abc.def.ghi.jkl"):
        assert secret not in text
    assert "[REDACTED-EMAIL]" in text and "[REDACTED-PHONE]" in text and "[REDACTED-KEY]" in text
    log.removeHandler(handler)
    handler.close()
    assert (
        redact("task t20261122-023000-abcdef at 2026-11-22 12:30, v1.2.3")
        == "task t20261122-023000-abcdef at 2026-11-22 12:30, v1.2.3"
    )
