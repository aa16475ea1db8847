"""The whole plan, derived from the spec and the planner's blueprint: structure from the spec, code from the
model.

Scaffold steps (Gradle settings and build files, properties, theme, the entity, string resources, the
manifest) are written from the spec and blueprint without a model call and checked like every file.
Model steps (the repository, and per screen its layout, view model and activity) are written by the
coder, each under a schema built for that step. Paths follow Android conventions from names the
blueprint validated, so they are safe by construction; the plan still passes ``validate_plan``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sentinel_mcp.swarm.blueprint import Blueprint
from sentinel_mcp.swarm.plan import Plan, PlanError, PlanStep, validate_plan
from sentinel_mcp.swarm.spec import TaskSpec

FIXED_STEPS = 9  # settings, root build, properties, app build, theme, entity, repository, strings, manifest
STEPS_PER_SCREEN = 3  # layout (or composable screen), view model, activity


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def max_screens(max_steps: int) -> int:
    return max(0, (max_steps - FIXED_STEPS) // STEPS_PER_SCREEN)


@dataclass(frozen=True)
class ProjectLayout:
    """Where each kind of file lives, for one spec."""

    spec: TaskSpec

    @property
    def src(self) -> str:
        return f"app/src/main/java/{self.spec.package_path}"

    @property
    def res(self) -> str:
        return "app/src/main/res"

    @property
    def compose(self) -> bool:
        return self.spec.ui_system == "Compose"

    def entity(self, bp: Blueprint) -> str:
        return f"{self.src}/data/{bp.entity}.kt"

    def repository(self, bp: Blueprint) -> str:
        return f"{self.src}/data/{bp.entity}Repository.kt"

    def screen_ui(self, screen: str) -> str:
        if self.compose:
            return f"{self.src}/ui/{screen}Screen.kt"
        return f"{self.res}/layout/{layout_name(screen)}.xml"

    def viewmodel(self, screen: str) -> str:
        return f"{self.src}/ui/{screen}ViewModel.kt"

    def activity(self, screen: str) -> str:
        return f"{self.src}/ui/{screen}Activity.kt"

    @property
    def manifest(self) -> str:
        return "app/src/main/AndroidManifest.xml"

    @property
    def strings(self) -> str:
        return f"{self.res}/values/strings.xml"

    @property
    def themes(self) -> str:
        return f"{self.res}/values/themes.xml"


def layout_name(screen: str) -> str:
    return f"activity_{snake(screen)}"


def compose_plan(spec: TaskSpec, bp: Blueprint, max_steps: int) -> Plan:
    """The ordered steps; ``PlanError`` if they do not fit ``max_steps`` or fail the design's checks."""
    where = ProjectLayout(spec)
    steps: list[PlanStep] = []

    def add(
        path: str,
        file_type: str,
        kind: str,
        description: str,
        deps: list[int],
        *,
        origin: str = "scaffold",
        screen: str | None = None,
        features: list[str] | None = None,
    ) -> int:
        number = len(steps) + 1
        steps.append(
            PlanStep(
                step_number=number,
                phase=_phase(kind),
                file_path=path,
                file_type=file_type,
                dependencies=deps,
                description=description,
                origin=origin,
                kind=kind,
                screen=screen,
                features=features or [],
            )
        )
        return number

    ui = "Jetpack Compose" if where.compose else "XML layouts"
    settings = add(
        "settings.gradle.kts", "gradle", "settings", f"Gradle settings of {spec.app_name}: the app module", []
    )
    add(
        "build.gradle.kts",
        "gradle",
        "root_build",
        "Root build file: the Android and Kotlin plugins",
        [settings],
    )
    add("gradle.properties", "properties", "properties", "Gradle properties: AndroidX, Kotlin code style", [])
    add(
        "app/build.gradle.kts",
        "gradle",
        "app_build",
        f"App module build: namespace {spec.package_name}, minSdk {spec.min_sdk}, targetSdk "
        f"{spec.target_sdk}, "
        f"{ui}, ViewModel and LiveData",
        [settings],
    )
    theme = add(where.themes, "xml", "themes", f"The app theme of {spec.app_name}", [])
    fields = ", ".join(f"{f.name}: {f.type}" for f in bp.fields)
    entity = add(where.entity(bp), "kotlin", "entity", f"Data class {bp.entity} (id: Long, {fields})", [])
    repo = add(
        where.repository(bp),
        "kotlin",
        "repository",
        f"{bp.entity}Repository: keeps the {bp.entity} items and the operations the features need",
        [entity],
        origin="model",
        features=list(spec.features),
    )
    texts: list[int] = []  # the steps whose answers carry texts (string resources)
    activities: list[int] = []
    for screen in bp.screen_names():
        feats = bp.features_of(screen)
        what = f"{screen} screen ({'; '.join(feats)}): {bp.summary_of(screen)}"
        ui_step = add(
            where.screen_ui(screen),
            "kotlin" if where.compose else "xml",
            "screen_ui",
            f"What the {what} shows and what the user can do there",
            [entity, repo],
            origin="model",
            screen=screen,
            features=feats,
        )
        vm = add(
            where.viewmodel(screen),
            "kotlin",
            "viewmodel",
            f"{screen}ViewModel: state and actions of the {what}",
            [repo, ui_step],
            origin="model",
            screen=screen,
            features=feats,
        )
        activities.append(
            add(
                where.activity(screen),
                "kotlin",
                "activity",
                f"{screen}Activity: shows the {what}",
                [ui_step, vm],
                origin="model",
                screen=screen,
                features=feats,
            )
        )
        texts += [ui_step, vm, activities[-1]]
    strings = add(
        where.strings,
        "xml",
        "strings",
        "String resources: the app name and every text the screens show",
        texts,
    )
    add(
        where.manifest,
        "xml",
        "manifest",
        f"Manifest: the app and its {len(activities)} activities (the first screen is the launcher)",
        [theme, strings, *activities],
    )
    if len(steps) > max_steps:
        raise PlanError(
            [
                f"the plan needs {len(steps)} steps ({len(bp.screen_names())} screens) but the cap is "
                f"{max_steps}; let features share screens or raise max_steps"
            ]
        )
    return validate_plan(Plan(steps=steps), spec, max_steps)


def _phase(kind: str) -> str:
    return {
        "settings": "setup",
        "root_build": "setup",
        "properties": "setup",
        "app_build": "setup",
        "themes": "resources",
        "strings": "resources",
        "manifest": "manifest",
        "entity": "data",
        "repository": "data",
    }.get(kind, "feature")
