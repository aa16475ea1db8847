"""A model step's file from its answer: the decisions so far plus the candidate answer, rendered."""

from __future__ import annotations

import copy

from sentinel_mcp.swarm.feature_code.activity_render import activity_kt
from sentinel_mcp.swarm.feature_code.answers import Decisions, _Answer
from sentinel_mcp.swarm.feature_code.data_render import repository_kt, viewmodel_kt
from sentinel_mcp.swarm.feature_code.screen_render import compose_screen_kt, layout_xml
from sentinel_mcp.swarm.feature_code.strings import screen_strings
from sentinel_mcp.swarm.plan import PlanStep


def with_answer(d: Decisions, step: PlanStep, answer: _Answer) -> Decisions:
    """The decisions as they would be if ``answer`` were accepted (``d`` itself is not changed)."""
    trial = copy.copy(d)
    trial.screens, trial.viewmodels, trial.activities = (
        dict(d.screens),
        dict(d.viewmodels),
        dict(d.activities),
    )
    trial.accept(step, answer)
    return trial


def render_step(step: PlanStep, d: Decisions) -> str:
    """The file of ``step`` from decisions that include its answer."""
    package = d.spec.package_name
    screen = step.screen or ""
    if step.kind == "repository":
        assert d.repository is not None
        return repository_kt(package, d.blueprint, d.repository)
    if step.kind == "screen_ui":
        ui = d.screens[screen]
        if d.spec.ui_system == "Compose":
            return compose_screen_kt(package, screen, d.blueprint, ui)
        return layout_xml(screen, d.blueprint, ui)
    if step.kind == "viewmodel":
        return viewmodel_kt(package, screen, d)
    if step.kind == "activity":
        return activity_kt(package, screen, d)
    raise ValueError(f"step {step.step_number} ({step.kind}) is not a model step")


def texts_of(step: PlanStep, d: Decisions) -> dict[str, str]:
    """The string resources a step's answer defines (shown to the critic beside the file)."""
    screen = step.screen or ""
    only = Decisions(d.spec, d.blueprint)
    if step.kind == "screen_ui":
        only.screens = {screen: d.screens[screen]}
    elif step.kind == "viewmodel":
        only.viewmodels = {screen: d.viewmodels[screen]}
    elif step.kind == "activity":
        only.activities = {screen: d.activities[screen]}
    else:
        return {}
    return screen_strings(only, screen)
