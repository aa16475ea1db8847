"""`sentinel-mcp check | query | facts` as a user runs them, and catalog checks of bindings and guards.

Each command runs once end to end in its own interpreter (``cli``: ``python -m sentinel_mcp``, exit code and
output as a shell sees them); the other cases call the same ``main`` in this process (``run_main``: the same
parsing and command code, without a fresh interpreter's ~1 s of imports and engine start each)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.policy.policy_rig import BOOKINGS_PL, rig
from tests.support.cli_in_process import run_main

from sentinel_mcp.paths import PROJECT_ROOT
from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(60)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))
    return subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=50,
    )


def test_check_reports_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pl"
    bad.write_text("ok(1).\n\nguard('x__y', [], missing_pred(1)).\nrule(X) :- ok(X\n")
    r = cli("check", str(bad), cwd=tmp_path)
    assert r.returncode == 1
    assert f"{bad}:3: error: call to undefined predicate missing_pred/1" in r.stdout
    assert f"{bad}:4: error: syntax error" in r.stdout
    assert "Traceback" not in r.stderr
    good = run_main(["check", str(BOOKINGS_PL)])
    assert good.returncode == 0, good.stdout + good.stderr
    missing = run_main(["check", str(tmp_path / "nope.pl")])
    assert missing.returncode == 1 and "file not found" in missing.stdout


def test_check_exit_codes_and_one_line_per_problem(tmp_path: Path) -> None:
    import re

    line = re.compile(r"^(?P<file>[^\n]+):(?P<line>\d+): (?P<kind>error|warning): \S[^\n]*$")
    clean = run_main(["check", str(BOOKINGS_PL)])
    assert (clean.returncode, clean.stdout) == (0, "")
    warn = tmp_path / "warn.pl"
    warn.write_text("ok(1). :- public ok/1.\n:- initialization(ok(1)).\n")
    r = run_main(["check", str(warn)])
    assert r.returncode == 1 and r.stdout.splitlines() == [r.stdout.strip()], (
        r.stdout
    )  # a warning is a problem
    m = line.match(r.stdout.strip())
    assert m and (m["file"], m["line"], m["kind"]) == (str(warn), "2", "warning"), r.stdout
    # a missing file or a directory does not hide the problems of the files that can be read
    bad = tmp_path / "bad.pl"
    bad.write_text("ok(1).\nrule(X) :- ok(X\n")
    r = run_main(["check", str(bad), str(tmp_path / "nope.pl"), str(tmp_path)])
    assert r.returncode == 1 and "Traceback" not in r.stderr
    got = [line.match(x) for x in r.stdout.splitlines()]
    assert all(got) and len(got) == 3, r.stdout
    assert {(m["file"], m["line"], m["kind"]) for m in got} == {
        (str(bad), "2", "error"),
        (str(tmp_path / "nope.pl"), "0", "error"),
        (str(tmp_path), "0", "error"),
    }
    assert "unexpected end of file" in r.stdout and "is a directory" in r.stdout
    # usage errors: nothing to check, an unknown option, a config that does not exist
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"sentinel": {"rulebases": []}}))
    assert run_main(["-c", str(empty), "check"]).returncode == 2
    assert run_main(["check", "--no-such-option"]).returncode == 2
    assert run_main(["-c", str(tmp_path / "none.json"), "check", str(bad)]).returncode == 2


async def test_catalog_checks(tmp_path: Path) -> None:
    f = tmp_path / "cat.pl"
    f.write_text(
        BOOKINGS_PL.read_text() + "\n"
        "binding(bad_fact(B, S), tool('bk__cancel_booking', [booking_id = B]), extract([S = '/status']), "
        "[]).\n"
        "guard('nosuch__tool', [], true).\n"
        "guard('bk__*', [], true).\n"
    )
    lines = f.read_text().splitlines()
    async with rig(tmp_path / "facts.db") as r:
        problems = await check_files(shared_engine(), [f], r.port.list_catalog_tools())
    got = {(p.line, p.message) for p in problems}
    n = len(lines)
    assert (
        n - 2,
        "binding to bk__cancel_booking, which is not read-only (no readOnlyHint annotation and no "
        "read_only/1 declaration)",
    ) in got
    assert (n - 1, "guard for nosuch__tool, which no upstream has") in got
    assert not any(ln == n for ln, _ in got)  # a pattern matching existing tools is fine
    assert sum(1 for p in problems if p.severity == "error") == 2


async def test_query_and_facts_commands_on_the_store(tmp_path: Path) -> None:
    data = tmp_path / "data"
    config = tmp_path / "sentinel.json"
    config.write_text(
        json.dumps(
            {
                "sentinel": {
                    "rulebases": [str(BOOKINGS_PL)],
                    "data_dir": str(data),
                    "seeds": {"current_user": "u_123"},
                }
            }
        )
    )
    # a guard on the same store establishes facts the commands then read
    async with rig(data / "facts.db") as r:
        await r.guard.decide(r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"}, session_id="cli"))
    listed = cli("-c", str(config), "facts", cwd=tmp_path)
    assert listed.returncode == 0 and "cli\t" in listed.stdout
    # in process on a thread: the command runs its own event loop (asyncio.run)
    summary = await asyncio.to_thread(run_main, ["-c", str(config), "facts", "--session", "cli"])
    assert "booking_status('BK-789',confirmed)" in summary.stdout
    q = cli("-c", str(config), "query", "booking_status(B, S)", "--session", "cli", cwd=tmp_path)
    assert q.returncode == 0, q.stdout + q.stderr
    out = json.loads(q.stdout)
    assert out["status"] == "proved" and out["solutions"][0]["bindings"] == {"B": "BK-789", "S": "confirmed"}
    # without a gateway, a fact that is not stored cannot be fetched: the answer says so
    unstored = ["-c", str(config), "query", "booking_status('BK-456', S)", "--session", "cli"]
    q = await asyncio.to_thread(run_main, unstored)
    assert q.returncode == 1
    out = json.loads(q.stdout)
    assert out["status"] == "failed" and "no gateway" in out["missing"][0]


async def test_an_effect_establishes_only_declared_base_facts(tmp_path: Path) -> None:
    from sentinel_mcp.policy.engine import shared_engine

    pl = tmp_path / "effects.pl"
    pl.write_text(
        "fact(done/1).\n"
        "effect('t__write', [id = X], [establish(done(X))]).\n"
        "effect('t__write', [id = X], [establish(undeclared(X))]).\n"
        "effect('t__write', [id = X], [remember(X)]).\n"
    )
    problems = [
        (p.line, p.message) for p in await check_files(shared_engine(), [pl]) if p.severity == "error"
    ]
    assert [line for line, _ in problems if "not a base predicate" in _] == [3], problems
    assert [line for line, _ in problems if "unknown effect action" in _] == [4], problems
