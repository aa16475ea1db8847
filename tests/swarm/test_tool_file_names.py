"""The file names the models wrote are checked again by the toolchain before anything is written for a tool.

Found by red team 'swarm' 6: ``check_kotlin`` and ``check_resources`` wrote each file they were given at
``workspace / name`` as the gateway (root) with no check of their own: a name that is absolute, climbs out
with ``..``, holds a NUL, a look-alike slash or is overlong was written where it pointed (``/tmp/x/A.kt``
made as root, directories included) or broke the check with an exception. The plan's validation was the only
guard; the toolchain is called with whatever its caller holds. Now each name is checked again
(``path_safety``: the plan's own rules, links refused) and one refused is a BLOCKER of its own, never written
and never given to the tool."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from tests.swarm.support.tool_processes import KOTLIN, script_tools

from sentinel_mcp.swarm.toolchain import Toolchain, VerifySettings

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("tools_reach_tmp_path")]

# a stand-in tool that lists the files of its workspace, then its arguments after its options (what is said
# of a tool that failed is its output's first 200 characters)
_LISTS = (
    "#!/bin/sh\nexec 2>&1\nfind . -type f ! -name .editorconfig | sort\n"
    'echo "$@" | sed "s/.*--relative//; s/.*gen //"\nexit 1\n'
)
_GOOD = "app/src/main/java/com/example/A.kt"


def _names(mark: str) -> dict[str, tuple[str, Path | None]]:
    """Hostile names: what each is, and where it would land outside the workspace (None: nowhere outside)."""
    out = Path("/tmp") / mark
    return {
        "absolute": (f"{out}/Abs.kt", out / "Abs.kt"),
        "dot-dot": (f"../{mark}-up.kt", Path("/tmp") / f"{mark}-up.kt"),
        "dot-dot within": (f"app/../../{mark}-in.kt", Path("/tmp") / f"{mark}-in.kt"),
        "home": (f"~/{mark}.kt", None),
        "NUL": (f"app/A\x00{mark}.kt", None),
        "backslash": (f"app\\..\\..\\{mark}.kt", None),
        "division slash": (f"app\u2215{mark}.kt", None),
        "fullwidth slash": (f"app\uff0f{mark}.kt", None),
        "overlong": ("app/" + "A" * 300 + ".kt", None),
        "empty component": (f"app//{mark}.kt", None),
        "a file as a directory": (f"{_GOOD}/{mark}.kt", None),
        "newline": (f"app/A\n{mark}.kt", None),
    }


def _removed(outside: Path | None, mark: str) -> None:
    """What a run without the check (main) wrote outside: its file, and the directory made for it."""
    if outside is not None:
        outside.unlink(missing_ok=True)
        if outside.parent.name == mark:
            shutil.rmtree(outside.parent, ignore_errors=True)


@pytest.mark.parametrize("kind", list(_names("x")))
async def test_a_hostile_kotlin_file_name_is_refused_before_anything_is_written(tmp_path, kind) -> None:
    mark = f"sentinel-name-{uuid.uuid4().hex}"
    name, outside = _names(mark)[kind]
    tools = script_tools(tmp_path, _LISTS)
    try:
        report = await tools.check_kotlin({_GOOD: KOTLIN[_GOOD], name: "class B\n"})
        assert outside is None or not outside.exists(), outside
    finally:
        _removed(outside, mark)
    ran = " ".join(report.notes)
    assert mark not in ran and "A" * 300 not in ran, ran  # neither written nor given to the tool
    assert f"./{_GOOD}" in ran, ran  # the good file is still checked
    refused = [i for i in report.issues if i.file == name]
    assert refused and refused[0].severity == "BLOCKER", report.issues


@pytest.mark.parametrize("kind", ["absolute", "dot-dot", "NUL", "overlong"])
async def test_a_hostile_resource_file_name_is_refused_before_anything_is_written(tmp_path, kind) -> None:
    mark = f"sentinel-name-{uuid.uuid4().hex}"
    raw, _ = _names(mark)[kind]
    # under res/ as the toolchain selects them, then out of it
    name = "app/src/main/res/" + ("../../" + raw.lstrip("./") if kind == "dot-dot" else raw)
    outside = _names(mark)[kind][1]
    aapt = tmp_path / "aapt"
    aapt.write_text(_LISTS)
    aapt.chmod(0o755)
    (tmp_path / "platform.apk").write_text("not read\n")
    settings = VerifySettings(
        kotlin=False, resources=True, aapt=str(aapt), platform=str(tmp_path / "platform.apk"), timeout=900
    )
    good = "app/src/main/res/values/strings.xml"
    try:
        report = await Toolchain(settings).check_resources(
            {good: "<resources/>\n", name: "<resources/>\n"}, "com.example"
        )
        assert outside is None or not outside.exists(), outside
    finally:
        _removed(outside, mark)
    ran = " ".join(i.message for i in report.issues if i.file != name)
    assert mark not in ran, ran
    assert "./res/values/strings.xml" in ran, ran
    refused = [i for i in report.issues if i.file == name]
    assert refused and refused[0].severity == "BLOCKER", report.issues
