"""A whole project decided by hand, answer by answer, as a build accumulates them (for the structure tests).
"""

from __future__ import annotations

from tests.swarm.support.scripted_model import BLUEPRINT, SPEC

from sentinel_mcp.swarm.blueprint import parse_blueprint
from sentinel_mcp.swarm.feature_code.answers import (
    ActivityAnswer,
    Decisions,
    RepositoryAnswer,
    ScreenAnswer,
    ViewModelAnswer,
    parse_answer,
)
from sentinel_mcp.swarm.feature_code.render import render_step, with_answer
from sentinel_mcp.swarm.project_plan import compose_plan
from sentinel_mcp.swarm.scaffold import scaffold_file
from sentinel_mcp.swarm.spec import parse_spec


def decided(spec_data=SPEC, blueprint=BLUEPRINT, *, repo_ops=("remove", "update", "clear"), confirm=True):
    """Every step of a build decided by hand, the way accepted answers accumulate: (decisions, {path: text}).
    """
    spec = parse_spec(spec_data)
    bp = parse_blueprint(blueprint, spec, max_screens=5)
    plan = compose_plan(spec, bp, 25)
    d, files = Decisions(spec, bp), {}
    for step in plan.steps:
        if step.origin == "scaffold":
            files[step.file_path] = scaffold_file(step, d)
            continue
        screen = step.screen or ""
        others = [s for s in bp.screen_names() if s != screen]
        answer = {
            "repository": lambda: RepositoryAnswer(operations=list(repo_ops), order="alphabetical"),
            "screen_ui": lambda: ScreenAnswer.model_validate(
                {
                    "title": 'It\'s "mine" & <yours>',
                    "inputs": [{"field": bp.text_field, "hint": "@Write here"}],
                    "buttons": [{"action": "add", "label": "Save"}]
                    + [{"action": f"open_{o}", "label": "Go"} for o in others]
                    + ([{"action": "clear", "label": "Clear"}] if "clear" in repo_ops else []),
                    "list": {"on_click": "remove" if "remove" in repo_ops else "none"},
                    "empty": "Nothing yet",
                }
            ),
            "viewmodel": lambda: ViewModelAnswer(
                functions=[
                    {
                        "action": a,
                        "name": f"do{a.title().replace('_', '')}",
                        "done": "Done.",
                        "blank": "Type something" if a == "add" else None,
                    }
                    for a in d.screens[screen].actions()
                ]
            ),
            "activity": lambda: ActivityAnswer(label="Notes", confirm=confirm, show_fields=["done"]),
        }[step.kind]()
        answer_obj, issues = parse_answer(step, answer.model_dump(by_alias=True), d)
        assert issues == [] and answer_obj is not None, issues
        d = with_answer(d, step, answer_obj)
        files[step.file_path] = render_step(step, d)
    return d, plan, files
