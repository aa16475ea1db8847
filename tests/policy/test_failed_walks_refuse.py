"""A load-time walk that fails refuses the rulebase (and a check's walk that fails says so). The secret walk
and the own-text walk each return the errors they find; one that failed (a case it does not know, a bug) gave
no errors, and the rulebase loaded unchecked: a password shown in a question passed. Now a walk that fails is
an error itself (``walked/4`` in rulebase_loading.pl). The walk is made to fail in a process of its own (real
SWI-Prolog: a static predicate of Sentinel's core replaced there, never in the test run's shared engine)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]

LEAK = "guard('x__login', [user = U, password = P],\n      ( confirmed('Sign in with ~w?', [P]) )).\n"
PLAIN = "guard('x__login', [user = U], ( U == alice )).\n"
SCRIPT = """
import asyncio, json, sys
from pathlib import Path
from sentinel_mcp.policy.checker import check_paths
from sentinel_mcp.policy.engine import shared_engine

async def main():
    engine = shared_engine()
    broken = sys.argv[2]
    if broken:  # the walk (Name/Arity) replaced by one that fails, in this process only
        name, arity = broken.split("/")
        await engine.goal(f"abolish(sentinel_core:{broken}), functor(H, {name}, {arity}), "
                          "assertz((sentinel_core:H :- fail))")
    problems = await check_paths(engine, [Path(sys.argv[1])])
    print(json.dumps([[p.severity, p.line, p.message] for p in problems]))

asyncio.run(main())
"""


def _checked(tmp_path: Path, text: str, broken: str = "") -> list[list]:
    rb = tmp_path / "rb.pl"
    rb.write_text(text, encoding="utf-8")
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(rb), broken], cwd=ROOT, capture_output=True,
                       text=True, timeout=100, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_the_leak_is_refused_by_the_walk_that_runs(tmp_path: Path) -> None:
    """The control: the secret walk, running, refuses the question that shows the password."""
    problems = _checked(tmp_path, LEAK)
    assert any(s == "error" and "password" in m for s, _, m in problems), problems


@pytest.mark.parametrize("walk", ["secret_flow_errors/2", "own_text_errors/2"])
def test_a_walk_that_fails_refuses_the_rulebase(tmp_path: Path, walk: str) -> None:
    problems = _checked(tmp_path, PLAIN, broken=walk)
    errors = [m for s, _, m in problems if s == "error"]
    assert any("could not be checked" in m for m in errors), problems
    assert [line for s, line, m in problems if "could not be checked" in m] == [1]


ASKS = "guard('x__pay', [to = T, amount = A], confirmed('Pay ~w?', [T])).\n"


def test_the_confirmation_walk_tells_what_it_does_not_show(tmp_path: Path) -> None:
    """The control: the confirmation walk, running, tells the amount the question does not show."""
    problems = _checked(tmp_path, ASKS)
    assert any("does not show" in m and "amount" in m for _, _, m in problems), problems


def test_a_confirmation_walk_that_fails_is_said(tmp_path: Path) -> None:
    """The walk of which arguments a confirmation shows (confirmation_flows.pl) left out a guard whose walk
    failed: its silence read as a confirmation that shows every argument. Now the guard is told, at its
    line, as a walk that could not finish."""
    problems = _checked(tmp_path, ASKS, broken="flow/3")
    told = [line for _, line, m in problems if "could not finish" in m and "confirmation" in m]
    assert told == [1], problems
