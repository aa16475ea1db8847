"""SWI-Prolog's location, kept once, spares every later start pyswip's ``swipl --dump-runtime-variables`` run
(issue 21); a kept file that could have been planted, or that names another ``swipl`` or library, is not
believed. Each start is a real child process with the real SWI-Prolog, behind a ``swipl`` on PATH that notes
every run of it."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REAL_SWIPL = shutil.which("swipl")
pytestmark = pytest.mark.skipif(
    REAL_SWIPL is None or not sys.platform.startswith("linux"), reason="needs swipl on Linux"
)

# the gateway's own way in: the shared engine, a goal proved, and the environment it leaves
CHILD = """
import asyncio, json, os
from sentinel_mcp.policy.engine import shared_engine
async def main():
    row = await shared_engine().run(lambda p: [str(r["X"]) for r in p.query("X is 40 + 2")])
    print(json.dumps({"row": row, "lib": os.environ.get("LIBSWIPL_PATH"),
                      "home": os.environ.get("SWI_HOME_DIR")}))
asyncio.run(main())
"""


@pytest.fixture
def rig(tmp_path: Path) -> dict[str, Path]:
    bin_dir, cache, runs = tmp_path / "bin", tmp_path / "cache", tmp_path / "swipl-runs"
    bin_dir.mkdir()
    wrapper = bin_dir / "swipl"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {runs}\nexec {REAL_SWIPL} "$@"\n')
    wrapper.chmod(0o755)
    return {"bin": bin_dir, "cache": cache, "runs": runs, "tmp": tmp_path}


def start(rig: dict[str, Path], **env: str) -> tuple[dict[str, object], int]:
    """One start: what it answered, and how many times it ran ``swipl``."""
    before = len(rig["runs"].read_text().splitlines()) if rig["runs"].exists() else 0
    full = {k: v for k, v in os.environ.items() if k not in ("LIBSWIPL_PATH", "SWI_HOME_DIR")}
    full.update(PATH=f"{rig['bin']}{os.pathsep}{os.environ.get('PATH', '')}",
                XDG_CACHE_HOME=str(rig["cache"]), PYTHONPATH=str(ROOT), **env)
    p = subprocess.run([sys.executable, "-c", CHILD], env=full, cwd=rig["tmp"], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    after = len(rig["runs"].read_text().splitlines()) if rig["runs"].exists() else 0
    return json.loads(p.stdout.strip().splitlines()[-1]), after - before


def kept_file(rig: dict[str, Path]) -> Path:
    return rig["cache"] / "sentinel-mcp" / "swipl-location.json"


def test_second_start_runs_no_swipl_and_leaves_the_environment_as_it_was(rig: dict[str, Path]) -> None:
    first, runs = start(rig)
    assert runs == 1  # pyswip's own search, once
    assert kept_file(rig).exists()
    mode = kept_file(rig).stat().st_mode
    assert not mode & (stat.S_IWGRP | stat.S_IWOTH)
    second, runs = start(rig)
    assert runs == 0
    assert first == second
    assert second["row"] == ["42"]
    assert second["lib"] is None and second["home"] is None  # put back after the import


TAMPERS = ["group-writable", "other-writable", "dir-writable", "symlink", "other-lib", "lib-changed",
           "relative", "garbage", "oversized", "wrong-types"]


@pytest.mark.parametrize("tamper", TAMPERS)
def test_a_kept_file_that_could_be_planted_or_is_stale_is_not_believed(
    rig: dict[str, Path], tamper: str
) -> None:
    start(rig)
    kept = kept_file(rig)
    data = json.loads(kept.read_text())
    decoy = rig["tmp"] / "decoy.so"
    decoy.write_bytes(b"\x7fELF not a library")
    if tamper == "group-writable":
        kept.chmod(0o620)
    elif tamper == "other-writable":
        kept.chmod(0o602)
    elif tamper == "dir-writable":
        kept.parent.chmod(0o777)
    elif tamper == "symlink":
        elsewhere = rig["tmp"] / "elsewhere.json"
        elsewhere.write_text(json.dumps({**data, "lib": str(decoy), "lib_identity": None}))
        kept.unlink()
        kept.symlink_to(elsewhere)
    elif tamper == "other-lib":  # another file at the name, or another name: not the file that was found
        data.update(lib=str(decoy))
        kept.write_text(json.dumps(data))
    elif tamper == "lib-changed":
        data["lib_identity"][3] += 1
        kept.write_text(json.dumps(data))
    elif tamper == "relative":
        data["home"] = "swi-prolog"
        kept.write_text(json.dumps(data))
    elif tamper == "garbage":
        kept.write_text("{not json")
    elif tamper == "oversized":
        kept.write_text(json.dumps({**data, "pad": "x" * 5000}))
    elif tamper == "wrong-types":
        kept.write_text(json.dumps({**data, "lib": [data["lib"]]}))
    try:
        answer, runs = start(rig)
    finally:
        kept.parent.chmod(0o700)
    assert runs == 1  # pyswip searched again
    assert answer["row"] == ["42"]


def test_another_swipl_on_path_is_asked_again(rig: dict[str, Path]) -> None:
    start(rig)
    wrapper = rig["bin"] / "swipl"
    wrapper.write_text(wrapper.read_text() + "# another build\n")  # another size and time: another swipl
    _, runs = start(rig)
    assert runs == 1
    _, runs = start(rig)
    assert runs == 0


def test_the_callers_own_location_is_used_as_given(rig: dict[str, Path]) -> None:
    first, _ = start(rig)
    assert kept_file(rig).exists()
    data = json.loads(kept_file(rig).read_text())
    kept_file(rig).unlink()
    answer, runs = start(rig, LIBSWIPL_PATH=data["lib"], SWI_HOME_DIR=data["home"])
    assert runs == 0
    assert answer["lib"] == data["lib"] and answer["home"] == data["home"]  # the caller's, left in place
    assert not kept_file(rig).exists()  # nothing searched, nothing kept


def test_an_unwritable_cache_still_starts(rig: dict[str, Path]) -> None:
    rig["cache"].mkdir()
    rig["cache"].chmod(0o500)
    try:
        if os.access(rig["cache"], os.W_OK):
            pytest.skip("running as a user no permission stops (root)")
        answer, runs = start(rig)
    finally:
        rig["cache"].chmod(0o700)
    assert runs == 1 and answer["row"] == ["42"]


def test_nothing_is_kept_in_a_folder_others_may_write(rig: dict[str, Path]) -> None:
    folder = rig["cache"] / "sentinel-mcp"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    try:
        answer, runs = start(rig)
        assert runs == 1 and answer["row"] == ["42"]
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o700)
