"""The README's quick start, typed as it is written: ``sentinel-mcp call TOOL ARGS`` asks its questions on the
terminal. The command is taken from README.md itself (so the doc and the test cannot drift), run in a
subprocess with the user's answers on stdin, in process (no ``--url``) against the airline example with the
shipped rulebases (the embedded default without the built-ins, which this call does not need)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

pytestmark = pytest.mark.timeout(180)


def readme_call(tool: str) -> list[str]:
    """The README quick start's ``sentinel-mcp call`` line for ``tool``, as argv after ``sentinel-mcp``."""
    text = (ROOT / "README.md").read_text()
    (line,) = [ln for ln in text.splitlines() if re.match(rf"\.venv/bin/sentinel-mcp call {tool} ", ln)]
    argv = shlex.split(line)[1:]
    if "--url" in argv:  # run in process: the same question, no server to start beside the test
        at = argv.index("--url")
        del argv[at:at + 2]
    return argv


def run(argv: list[str], answers: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "sentinel.json"
    config.write_text(json.dumps({
        "mcpServers": {"airline": {"command": sys.executable, "args": ["-m", "examples.airline"]}},
        "sentinel": {
            "rulebases": ["shipped:rulebases/default.pl", "shipped:rulebases/airline.pl"],
            "seeds": {"current_user": "mia_li_3668", "today": "2024-05-15"},
            "builtins": [],
            "data_dir": str(tmp_path / "data"),
        },
    }))
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "PYTHONPATH": str(ROOT)}
    env.pop("SENTINEL_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(config), *argv], input=answers,
                          capture_output=True, text=True, timeout=150, env=env, cwd=tmp_path)


def test_the_choice_question_lists_its_choices_and_takes_one_by_number(tmp_path: Path) -> None:
    """The cancellation's reason is a choice: the terminal shows each choice and takes its number (before,
    it showed a bare "Your choice:" and refused every typed answer but the hidden internal value)."""
    argv = readme_call("airline__cancel_reservation")
    asked = run(argv, "", tmp_path)  # no answer: the question is shown, the call declined
    assert "Why do you want to cancel reservation NO6JO3?" in asked.stderr, asked.stderr
    for label in ("My plans changed", "The airline cancelled a flight", "Health reasons", "Bad weather",
                  "Another reason", "I don't know"):
        assert label in asked.stderr, asked.stderr
    assert "⟨U+000A⟩" not in asked.stderr, asked.stderr  # the blank line before a question is a blank line
    numbered = re.search(r"(\d+)\. My plans changed", asked.stderr)
    assert numbered, asked.stderr
    # the reason by its number, then the confirmation declined: the call is refused as declined, never for
    # an answer that "names none of the choices"
    answered = run(argv, f"{numbered.group(1)}\nn\n", tmp_path)
    out = answered.stdout + answered.stderr
    assert "was not accepted" not in out and "not one of the choices" not in out, out
    assert "Cancel" in answered.stderr or "cancel" in answered.stderr, answered.stderr
    assert "declined" in out, out


@pytest.mark.parametrize(
    "typed", ["9", "0", "-1", "my plans changed!", "Change_of_plan", "1.0", "health\u200b", "1 2", "\u0661"]
)
def test_a_choice_that_is_none_of_the_choices_declines(tmp_path: Path, typed: str) -> None:
    """No guessing: a number out of range or text that is neither a choice's value nor its label exactly
    declines the question (and so the call), never picks a choice."""
    answered = run(readme_call("airline__cancel_reservation"), f"{typed}\n", tmp_path)
    out = answered.stdout + answered.stderr
    assert answered.returncode == 1 and "refused" in out, out
    assert "Cancel reservation" not in answered.stderr, out  # the confirmation after a reason was never asked


def test_a_consent_allowed_for_this_call_only(tmp_path: Path) -> None:
    """``y`` to Allow and Enter to Remember: allowed for this call (the profile is printed)."""
    answered = run(readme_call("airline__get_user_details"), "y\n\n", tmp_path)
    assert answered.returncode == 0, answered.stdout + answered.stderr
    assert "mia_li_3668" in answered.stdout and "⟨U+000A⟩" not in answered.stderr, answered.stderr
