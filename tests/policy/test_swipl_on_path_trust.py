"""The guard's own engine is found on ``PATH`` as a trusted program only (``core/trusted_code.find_program``):
a ``swipl`` planted in a ``PATH`` entry another account may write, or in a relative entry (the working
folder), ahead of the real one is never run; the real one further on is. Before, ``shutil.which`` took the
first: whoever could write that folder decided every tool call (and ran code as Sentinel's user)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy.load_rehearsal import RehearsalFailed, rehearse
from sentinel_mcp.policy.query_worker import QueryWorker, QueryWorkerError

pytestmark = pytest.mark.timeout(120)
REAL = shutil.which("swipl")


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    assert REAL is not None
    tmp_path.chmod(0o755)
    folder = tmp_path / "planted"
    folder.mkdir()
    marker = tmp_path / "ran"
    fake = folder / "swipl"
    fake.write_text(f"#!/bin/sh\n: > {marker}\nexit 3\n")
    fake.chmod(0o755)
    folder.chmod(0o777)  # anybody may put a swipl of their own here
    monkeypatch.delenv("SENTINEL_SHARED_FILES", raising=False)
    return marker


async def _answer(qw: QueryWorker) -> dict:
    async def dump() -> str:
        return ""

    return await qw.query(rb_module="rb_path", rb_version="1", rb_files=[str(RULEBASES_DIR / "default.pl")],
                          session_module="s_path", generation=1, dump_session=dump, goal="X = 1")


@pytest.mark.parametrize("first", ["shared", "relative", "empty"])
async def test_a_planted_swipl_ahead_on_path_is_never_run(planted: Path, monkeypatch, first: str) -> None:
    folder = planted.parent / "planted"
    monkeypatch.chdir(folder)
    entry = {"shared": str(folder), "relative": ".", "empty": ""}[first]
    monkeypatch.setenv("PATH", f"{entry}{os.pathsep}{Path(REAL).parent}{os.pathsep}/usr/bin:/bin")
    qw = QueryWorker()
    try:
        out = await _answer(qw)
    finally:
        await qw.close()
    assert out["status"] == "proved" and not planted.exists(), out
    verdict = await rehearse([RULEBASES_DIR / "default.pl"], key=None)
    assert not verdict.get("errors") and not planted.exists(), verdict


async def test_only_a_planted_swipl_on_path_is_refused_saying_why(planted: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(planted.parent / "planted"))
    qw = QueryWorker()
    try:
        with pytest.raises(QueryWorkerError, match="another account could change it"):
            await _answer(qw)
    finally:
        await qw.close()
    with pytest.raises(RehearsalFailed, match="another account could change it"):
        await rehearse([RULEBASES_DIR / "default.pl"], key=None)
    assert not planted.exists()
