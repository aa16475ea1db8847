"""A ``.qlf`` planted beside a rulebase is never loaded: SWI-Prolog's own look-up (a ``use_module(x)`` or
``consult(x)`` picks ``x.qlf`` beside ``x.pl`` when it is newer) never runs for a rulebase, whose directives
are read as data (only dynamic/discontiguous/multifile/public are accepted, none executed) in the engine, the
rulebase rehearsal child and the query worker. The plant is live: a plain ``swipl`` that runs the directive
loads it (its initialization writes a marker). Real SWI-Prolog throughout."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sentinel_mcp.policy.query_worker import QueryWorker

from .policy_rig import make_guard

pytestmark = pytest.mark.timeout(180)

DIRECTIVES = ["use_module(planted)", "ensure_loaded(planted)", "consult(planted)", "[planted]",
              "load_files(planted, [])", "use_module(library(planted))",
              "initialization(use_module(planted))", "include(planted)", "reexport(planted)",
              "autoload(planted)"]


def plant(directory: Path, marker: Path) -> None:
    """planted.pl (harmless) and planted.qlf newer than it, compiled from a text that writes ``marker``."""
    source = directory / "planted.pl"
    source.write_text(f":- module(planted, []).\n"
                      f":- initialization((open('{marker}', write, S), close(S))).\n")
    subprocess.run(["swipl", "-f", "none", "-q", "-g", f"qcompile('{source}')", "-t", "halt"], check=True,
                   capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    source.write_text(":- module(planted, []).\n")
    later = source.stat().st_mtime + 100
    os.utime(directory / "planted.qlf", (later, later))
    marker.unlink(missing_ok=True)


def rulebase(directory: Path, directive: str) -> Path:
    rules = directory / "rules.pl"
    rules.write_text(f":- {directive}.\n?- {directive}.\nallow(read_file).\n")
    return rules


def test_the_plant_is_live(tmp_path: Path) -> None:
    marker = tmp_path / "loaded"
    plant(tmp_path, marker)
    subprocess.run(["swipl", "-f", "none", "-q", "-g", f"use_module('{tmp_path / 'planted'}')", "-t", "halt"],
                   check=True, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    assert marker.exists()


@pytest.mark.parametrize("directive", DIRECTIVES)
async def test_the_engine_and_the_rehearsal_never_load_a_qlf_beside_a_rulebase(tmp_path: Path,
                                                                              directive: str) -> None:
    marker = tmp_path / "loaded"
    plant(tmp_path, marker)
    guard = await make_guard(None, tmp_path / "store.db", files=[rulebase(tmp_path, directive)])
    try:
        assert guard.rulebases.loaded
    finally:
        await guard.close()
    assert not marker.exists()


async def test_the_query_worker_never_loads_a_qlf_beside_a_rulebase(tmp_path: Path) -> None:
    marker = tmp_path / "loaded"
    plant(tmp_path, marker)
    qw = QueryWorker()
    try:
        for n, directive in enumerate(DIRECTIVES):
            files = [str(rulebase(tmp_path, directive))]

            async def dump() -> str:
                return ""

            out = await qw.query(rb_module=f"rb_planted_{n}", rb_version=str(n), rb_files=files,
                                 session_module=f"s_planted_{n}", generation=1, dump_session=dump,
                                 goal="allow(X)")
            assert out["status"] == "proved", (directive, out)
    finally:
        await qw.close()
    assert not marker.exists()
