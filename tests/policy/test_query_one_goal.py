"""A client's query is one goal: text after the "." that ends it is an error, never dropped. SWI-Prolog's
term_string/3 reads the first term and ignores the rest, so ``own_reservation(R). cancel_allowed(R)`` was
answered "proved" for its first goal alone: the asker was told a goal held that was never proved."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy.query_worker import QueryWorker

pytestmark = pytest.mark.timeout(120)


async def _ask(qw: QueryWorker, goal: str) -> dict:
    async def dump() -> str:
        return ""

    files = [str(RULEBASES_DIR / "default.pl")]
    return await qw.query(rb_module="rb_one_goal", rb_version="1", rb_files=files, session_module="s_one",
                          generation=1, dump_session=dump, goal=goal)


async def test_text_after_the_goal_is_an_error_and_one_goal_is_answered(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    qw = QueryWorker()
    try:
        for goal in ["X = 1. fail", "X = 1 . Y = 2", "X = 1.\nfail.", f"X = 1. shell('touch {marker}')",
                     "X = 1. )(", "X = 1. % a comment\nfail", "true. /* c */ fail"]:
            out = await _ask(qw, goal)
            assert out["status"] == "error", (goal, out)
            assert "one goal" in out["message"], (goal, out)
        assert not marker.exists()
        for goal in ["X = 1", "X = 1.", "X = 1. % a comment", "X = 1 /* c */ .\n", "X = 1, Y = 2."]:
            out = await _ask(qw, goal)
            assert out["status"] == "proved", (goal, out)
            assert out["solutions"][0]["bindings"]["X"] == 1
    finally:
        await qw.close()
