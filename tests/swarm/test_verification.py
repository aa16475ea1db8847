"""The real tools check what the swarm writes: aapt compiles resources and the manifest, ktlint parses Kotlin.

They come from the Makefile (``make swarm-tools``); a machine without them says what it did not check.
"""

from __future__ import annotations

import pytest
from tests.swarm.support.scripted_model import EDITOR_LAYOUT, EDITOR_VM, SPEC
from tests.swarm.support.swarm_fixtures import openai_factory
from tests.swarm.support.decided_project import decided

from sentinel_mcp.swarm.build_service import BuildService
from sentinel_mcp.swarm.settings import swarm_settings
from sentinel_mcp.swarm.toolchain import Toolchain, VerifySettings

pytestmark = pytest.mark.timeout(240)
TOOLS = Toolchain()
needs_aapt = pytest.mark.skipif(not TOOLS.checks_resources, reason="aapt or android-framework-res missing "
                                                                   "(make swarm-tools)")
needs_ktlint = pytest.mark.skipif(not TOOLS.checks_kotlin, reason="ktlint or java missing (make swarm-tools)")


@needs_aapt
@pytest.mark.parametrize("ui", ["Views", "Compose"])
async def test_aapt_compiles_the_rendered_resources_and_finds_real_errors(ui) -> None:
    _d, _plan, files = decided(dict(SPEC, ui_system=ui))
    assert (await TOOLS.check_resources(files, "com.example.notes")).issues == []
    if ui == "Compose":
        return
    layout = dict(files)
    layout[EDITOR_LAYOUT] = files[EDITOR_LAYOUT].replace('android:inputType="text"',
                                                         'android:inputType="text" android:colour="red"')
    issues = (await TOOLS.check_resources(layout, "com.example.notes")).issues
    assert [(i.severity, i.file) for i in issues] == [("BLOCKER", EDITOR_LAYOUT)]
    assert "No resource identifier found for attribute 'colour'" in issues[0].message
    manifest = dict(files)
    manifest["app/src/main/AndroidManifest.xml"] = files["app/src/main/AndroidManifest.xml"].replace(
        "@string/app_name", "@string/no_such_text")
    issues = (await TOOLS.check_resources(manifest, "com.example.notes")).issues
    assert [(i.severity, i.file) for i in issues] == [("BLOCKER", "app/src/main/AndroidManifest.xml")]
    assert "no_such_text" in issues[0].message


@needs_ktlint
async def test_ktlint_parses_every_kotlin_file_and_blocks_syntax_errors() -> None:
    _d, _plan, files = decided(dict(SPEC, ui_system="Compose"))
    report = await TOOLS.check_kotlin(files, style=True)
    assert [i for i in report.issues if i.severity == "BLOCKER"] == [], report.issues
    broken = {EDITOR_VM: files[EDITOR_VM].replace("fun refresh() {", "fun refresh( {"),
              "app/build.gradle.kts": files["app/build.gradle.kts"].replace("android {", "android {{")}
    issues = (await TOOLS.check_kotlin(broken)).issues
    assert sorted(i.file for i in issues) == sorted(broken) and all(i.severity == "BLOCKER" for i in issues)
    assert all("Kotlin syntax error" in i.message for i in issues)


async def test_missing_tools_are_reported_not_guessed(tmp_path) -> None:
    none = Toolchain(VerifySettings(aapt=str(tmp_path / "no-aapt"), ktlint=str(tmp_path / "no-ktlint"),
                                    java=str(tmp_path / "no-java"), platform=str(tmp_path / "no.apk")))
    assert not none.checks_resources and not none.checks_kotlin
    notes = " ".join(none.describe())
    assert "resources not compiled" in notes and "Kotlin not parsed" in notes and "not checked here" in notes
    _d, _plan, files = decided()
    assert (await none.check_kotlin(files)).issues == [] and (
        await none.check_resources(files, "x.y")
    ).issues == []


@needs_aapt
@needs_ktlint
async def test_tool_errors_are_the_critics_blockers(tmp_path, model_server) -> None:
    """What a tool finds in a file rejects it before the model critic is asked, like any blocker."""
    from sentinel_mcp.swarm.limits import Limits
    from sentinel_mcp.swarm.orchestrator import Orchestrator
    from sentinel_mcp.swarm.spec import parse_spec
    from sentinel_mcp.swarm.state import SwarmStore
    from sentinel_mcp.swarm.workspace import Workspace

    d, plan, files = decided()
    async with SwarmStore(tmp_path / "swarm.db") as store:
        orch = Orchestrator(
            task_id="t20260101-000000-00000b",
            spec=parse_spec(SPEC),
            store=store,
            backend=await openai_factory(model_server)(),
            workspace=Workspace(tmp_path / "ws"),
            limits=Limits(),
            toolchain=TOOLS,
        )
        orch.completed = {p: t for p, t in files.items() if p.endswith("themes.xml")}
        layout = next(s for s in plan.steps if s.file_path == EDITOR_LAYOUT)
        bad = files[EDITOR_LAYOUT].replace('android:padding="16dp"', 'android:padding="sixteen"')
        verdict = await orch._critique(layout, bad, d)
        assert verdict.decision == "REJECT" and "aapt" in verdict.issues[0].message
        vm = next(s for s in plan.steps if s.file_path == EDITOR_VM)
        verdict = await orch._critique(vm, files[EDITOR_VM].replace("class ", "clas "), d)
        assert verdict.decision == "REJECT" and "Kotlin syntax error" in verdict.issues[0].message
        assert model_server.requests == []  # decided without the model
        await orch.backend.aclose()


@needs_aapt
@needs_ktlint
async def test_a_build_with_the_tools_on_reports_what_was_checked(tmp_path, model_server) -> None:
    service = BuildService(tmp_path / "swarm", swarm_settings({"backend": "openai"}))
    await service.start()
    try:
        task_id = await service.submit(SPEC, openai_factory(model_server))
        status = await service.wait(task_id)
    finally:
        await service.close()
    assert status["state"] == "COMPLETED", status["error"]
    report = status["report"]
    assert any("aapt" in n for n in report["tools"]) and any("ktlint" in n for n in report["tools"])
    assert any("not checked here" in n for n in report["tools"])
    assert not [c for c in report["checks"] if c["severity"] == "BLOCKER"]  # style findings may stay (MINOR)


def test_a_tool_reached_through_a_link_is_named_by_its_real_path(tmp_path) -> None:
    """A tool's view of the files holds its program's real directory (``tool_files.kept_dirs``): a program
    named through a linked directory (a checkout whose ``.tools`` is a link) was not in the view by that name,
    and every Kotlin file passed unparsed (ktlint could not be started: ACCEPT)."""
    from sentinel_mcp.swarm.toolchain import _found

    real = tmp_path / "real"
    real.mkdir()
    program = real / "ktlint"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    (tmp_path / "linked").symlink_to(real, target_is_directory=True)
    assert _found(str(tmp_path / "linked" / "ktlint")) == str(program.resolve())
