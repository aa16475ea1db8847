"""Structure from the spec, code from the model: the blueprint, the derived plan, the answers and what they
render."""

from __future__ import annotations

import pytest
from tests.swarm.support.decided_project import decided
from tests.swarm.support.scripted_model import BLUEPRINT, PLAN_PATHS, SPEC

from sentinel_mcp.swarm.blueprint import blueprint_schema, parse_blueprint
from sentinel_mcp.swarm.checks import check_file, check_project
from sentinel_mcp.swarm.feature_code.answers import answer_schema, parse_answer
from sentinel_mcp.swarm.feature_code.strings import resource_text
from sentinel_mcp.swarm.plan import PlanError
from sentinel_mcp.swarm.project_plan import compose_plan, max_screens
from sentinel_mcp.swarm.spec import parse_spec


def test_plan_follows_from_spec_and_blueprint() -> None:
    spec = parse_spec(SPEC)
    bp = parse_blueprint(BLUEPRINT, spec, max_screens=max_screens(25))
    plan = compose_plan(spec, bp, 25)
    assert [s.file_path for s in plan.steps] == PLAN_PATHS
    assert [s.origin for s in plan.steps].count("model") == 7
    for s in plan.steps:  # every dependency is an earlier step; the manifest comes after every activity
        assert all(d < s.step_number for d in s.dependencies)
    manifest = plan.steps[-1]
    assert {10, 13} <= set(manifest.dependencies)
    # features may share a screen: one screen, 12 steps
    shared = dict(BLUEPRINT, screens=[dict(s, screen="Notes") for s in BLUEPRINT["screens"]])
    assert len(compose_plan(spec, parse_blueprint(shared, spec, max_screens=5), 25).steps) == 12
    with pytest.raises(PlanError, match="the plan needs 15 steps"):
        compose_plan(spec, bp, 14)


@pytest.mark.parametrize(
    "change, why",
    [
        ({"more_fields": [{"name": "text", "type": "Int"}]}, "duplicate field names"),
        ({"more_fields": [{"name": "id", "type": "Int"}]}, "field name 'id' is reserved"),
        ({"entity": "NoteListViewModel"}, "two generated classes would have the same name"),
        ({"screens": [BLUEPRINT["screens"][0]]}, "features not covered by any screen: list notes"),
        ({"screens": BLUEPRINT["screens"] * 2}, "a feature is planned more than once"),
        ({"more_fields": [{"name": "x", "type": "Float"}]}, "more_fields.0"),
    ],
)
def test_blueprint_problems_are_refused(change, why) -> None:
    with pytest.raises(PlanError, match=why):
        parse_blueprint(dict(BLUEPRINT, **change), parse_spec(SPEC), max_screens=5)


def test_blueprint_schema_fixes_every_feature_in_order() -> None:
    schema = blueprint_schema(parse_spec(SPEC))
    screens = schema["properties"]["screens"]
    assert [s["properties"]["feature"] for s in screens["prefixItems"]] == [
        {"const": f} for f in SPEC["features"]
    ]
    assert screens["minItems"] == screens["maxItems"] == 2 and screens["items"] is False


@pytest.mark.parametrize("ui", ["Views", "Compose"])
def test_rendered_project_passes_every_deterministic_check(ui) -> None:
    _d, plan, files = decided(dict(SPEC, ui_system=ui))
    assert sorted(files) == sorted(s.file_path for s in plan.steps)
    for step in plan.steps:
        assert check_file(step.file_path, step.file_type, files[step.file_path]) == [], step.file_path
    assert check_project(files, "com.example.notes") == []
    strings = files["app/src/main/res/values/strings.xml"]
    # model texts are data: escaped for XML and for aapt, never pasted into code
    assert (
        "It\\'s \\&quot;mine\\&quot; &amp; &lt;yours&gt;" in strings
        or 'It\\\'s \\"mine\\" &amp; &lt;yours&gt;' in strings
    )
    assert ">\\@Write here<" in strings
    assert all("mine" not in text for path, text in files.items() if path.endswith(".kt"))


def test_resource_text_escapes() -> None:
    assert resource_text("a'b\"c\\d\ne") == "a\\'b\\\"c\\\\d\\ne"
    assert resource_text("?attr") == "\\?attr" and resource_text("<b>&") == "&lt;b&gt;&amp;"


def test_answer_schemas_follow_what_is_decided() -> None:
    d, plan, _files = decided(repo_ops=())
    step = {s.kind: s for s in plan.steps if s.screen == "NoteEditor"}
    ui = answer_schema(step["screen_ui"], d)
    # without remove/update/clear in the repository a screen can add and navigate, and a list row does nothing
    assert ui["properties"]["buttons"]["items"]["properties"]["action"]["enum"] == ["add", "open_NoteList"]
    assert ui["properties"]["list"]["anyOf"][1]["properties"]["on_click"]["enum"] == ["none"]
    vm = answer_schema(step["viewmodel"], d)
    assert [i["properties"]["action"]["const"] for i in vm["properties"]["functions"]["prefixItems"]] == [
        "add"
    ]
    d2, _plan, _ = decided()
    assert answer_schema(step["screen_ui"], d2)["properties"]["list"]["anyOf"][1]["properties"]["on_click"][
        "enum"
    ] == ["none", "remove", "toggle_done"]


def test_semantic_answer_problems() -> None:
    d, plan, _ = decided()
    step = next(s for s in plan.steps if s.kind == "viewmodel")
    _a, issues = parse_answer(step, {"functions": [{"action": "add", "name": "save", "done": "ok"}]}, d)
    assert any("one function per action is needed" in i.message for i in issues)
    assert any("needs a blank message" in i.message for i in issues)
    ui_step = next(s for s in plan.steps if s.kind == "screen_ui")
    _a, issues = parse_answer(
        ui_step,
        {
            "title": "T",
            "inputs": [],
            "buttons": [{"action": "add", "label": "A"}],
            "list": None,
            "empty": "E",
        },
        d,
    )
    assert [i.message for i in issues] == ["the add button needs an input for text (the Note's text)"]
    _a, issues = parse_answer(ui_step, {"title": 3}, d)
    assert issues and all(i.severity == "BLOCKER" and "schema" in i.message for i in issues)
