"""A core_qlf.json planted or damaged in the package directory never stops a start (policy/core_qlf.py): a
JSON nested past the parser's depth, a version of ``Infinity``, a manifest larger than any build writes, a
link, a FIFO (whose open waits for a writer) each make the plan the sources, at once. Real files in a copy
of the package's Prolog directory (test_core_qlf.py builds one for the manifests that match)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from sentinel_mcp.policy import core_qlf
from tests.support.core_copy import core_built, core_sources
from sentinel_mcp.policy.core_qlf import MANIFEST, load_plan


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    directory = core_sources(tmp_path)
    return directory


def planned_sources(directory: Path) -> bool:
    files, version = load_plan(directory)
    return version == 0 and all(f.endswith(".pl") for f in files)


@pytest.mark.parametrize("text", [
    "[" * 200_000,  # past the parser's recursion limit
    '{"files": ' + "{" * 100_000,
    '{"swipl_version": Infinity, "files": {}}',
    '{"swipl_version": -Infinity, "files": {}}',
    '{"swipl_version": NaN, "files": {}}',
    '{"swipl_version": 1e999, "files": {}}',
    '{"swipl_version": "9" , "files": {"a": [' + "[" * 50_000 + "]}",
    "\ufeff{}",
    "\x00",
])
def test_a_bomb_of_a_manifest_plans_the_sources(sources: Path, text: str) -> None:
    (sources / MANIFEST).write_text(text)
    assert planned_sources(sources)


def test_a_manifest_larger_than_a_build_writes_is_not_read(tmp_path: Path) -> None:
    """A manifest that would match, padded past ``MANIFEST_MOST``: not the build's (and not read whole)."""
    directory = core_built(tmp_path)
    assert not planned_sources(directory)
    manifest = (directory / MANIFEST).read_text()
    (directory / MANIFEST).write_text(manifest + " " * core_qlf.MANIFEST_MOST)
    assert planned_sources(directory)
    (directory / MANIFEST).write_text(manifest.replace("{", "{" + " " * core_qlf.MANIFEST_MOST, 1))
    assert planned_sources(directory)
    (directory / MANIFEST).write_text(manifest)  # the build's own: read as before
    assert not planned_sources(directory)
    # a link to the build's own manifest, kept elsewhere: the file itself is the package's or none
    elsewhere = tmp_path / "manifest.json"
    (directory / MANIFEST).rename(elsewhere)
    (directory / MANIFEST).symlink_to(elsewhere)
    assert planned_sources(directory)


@pytest.mark.parametrize("how", ["a FIFO", "a link to a FIFO", "a directory"])
def test_a_manifest_not_a_plain_file_is_not_waited_for(sources: Path, tmp_path: Path, how: str) -> None:
    fifo = tmp_path / "fifo" if how == "a link to a FIFO" else sources / MANIFEST
    if how == "a directory":
        fifo.mkdir()
    else:
        os.mkfifo(fifo)
    if how == "a link to a FIFO":
        (sources / MANIFEST).symlink_to(fifo)
    got: list[bool] = []
    planner = threading.Thread(target=lambda: got.append(planned_sources(sources)), daemon=True)
    planner.start()
    planner.join(60)  # (answered at once; on main a FIFO's open waited for a writer forever)
    if planner.is_alive():  # let it go: a writer opens, writes nothing, closes
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        planner.join(60)
        pytest.fail("load_plan waited for a writer of its manifest")
    assert got == [True]


@pytest.mark.parametrize("name", ["sentinel_core.qlf", "rule_compiler.pl"])
def test_a_file_larger_than_a_build_writes_is_not_read(tmp_path: Path, name: str) -> None:
    """A sparse file of a terabyte in a built file's place: not hashed (read whole, it was a MemoryError out
    of load_plan, or a machine's memory), the sources planned."""
    directory = core_built(tmp_path)
    assert not planned_sources(directory)
    with (directory / name).open("r+b") as f:
        f.truncate(1 << 40)
    assert planned_sources(directory)
