"""The what-if replay's child process (``console.replay_process``): the report of an ordinary candidate is the
one the replay makes in the gateway's process, and a replay that could not finish within its bound says so,
with nothing of what it decided so far. Real child processes, real SWI-Prolog."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.identity.identity_rig import BOOKINGS_PL, RULEBASES_DIR

from sentinel_mcp.config import PolicySettings
from sentinel_mcp.console.replay import candidate_files
from sentinel_mcp.console.replay_process import replay_isolated

pytestmark = pytest.mark.timeout(240)
SEEDS = {"current_user": "u_123", "today": "2025-01-15"}
CURRENT = [RULEBASES_DIR / "default.pl", BOOKINGS_PL]


def _rows(n: int) -> list[dict]:
    """Recorded allowed reads (newest first, as ``pick_rows`` gives them)."""
    return [
        {"id": i, "origin": "client", "decision": "allow", "tool": "bk__list_bookings", "upstream": "bk",
         "arguments": {"user_id": f"u_{i}"}, "session": f"s{i}", "proof": None}
        for i in range(n)
    ]


def _candidate(tmp: Path, extra: str) -> list[Path]:
    path = tmp / "bookings.pl"
    path.write_text(BOOKINGS_PL.read_text() + extra)
    return candidate_files(CURRENT, [path])


async def test_an_ordinary_candidate_is_replayed_whole(tmp_path):
    denying = "\nguard('bk__list_bookings', [user_id = U], require(U == u_0, 'only u_0 here')).\n"
    rows = _rows(3)
    report = await replay_isolated(
        rows, current=CURRENT, candidate=_candidate(tmp_path, denying), live_facts=None,
        settings=PolicySettings(), seeds=SEEDS,
    )
    assert not report.unfinished and not report.problems, (report.unfinished, report.problems)
    assert report.examined == 3 and report.current_version and report.candidate_version
    changed = sorted(r.row["id"] for r in report.changes)
    assert changed == [1, 2], report.results
    # the rows are the caller's own, and a change's proofs came back to be shown
    assert all(any(r.row is row for row in rows) for r in report.results)
    assert all("only u_0 here" in r.candidate_reason and r.candidate_proof for r in report.changes)


async def test_a_replay_that_could_not_finish_says_so(tmp_path):
    costly = (
        "\ncostly :- forall(between(1, 1000000, _), (length(L, 1000000), sort(0, @>=, L, _))).\n"
        "guard('bk__list_bookings', [user_id = _], costly).\n"
    )
    report = await replay_isolated(
        _rows(3), current=CURRENT, candidate=_candidate(tmp_path, costly), live_facts=None,
        settings=PolicySettings(), seeds=SEEDS, seconds=8,
    )
    assert "did not finish within 8 s" in report.unfinished, report.unfinished
    assert report.results == [] and report.examined == 0 and not report.changes

