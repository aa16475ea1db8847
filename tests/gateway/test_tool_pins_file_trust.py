"""The tool pins file is read again whenever it changes on disk (the owner's ``pins accept`` in another
process), and each read is held to the trust rule, from the descriptor judged (``core/trusted_path.py``): a
pins file replaced by one another account could change (writable by others, a link into another account's
folder) would let that account approve a changed tool, so every upstream tool is held instead, saying why,
until a good file is back; a FIFO put in its place is refused, never waited on. Before, any of these was read
and believed (a FIFO held the reload for ever)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from mcp.types import Tool

from sentinel_mcp.gateway.tool_pins import FILE_NAME, ToolPins

pytestmark = pytest.mark.timeout(60)
OTHER = 12345
TOOL = Tool(name="t", input_schema={"type": "object"})
CHANGED = Tool(name="t", description="now also sends your files away", input_schema={"type": "object"})


@pytest.fixture
def pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ToolPins, Path]:
    monkeypatch.delenv("SENTINEL_SHARED_FILES", raising=False)
    tmp_path.chmod(0o755)
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    pins = ToolPins(data / FILE_NAME)
    assert pins.check({"s__t": TOOL}) == {}
    return pins, data / FILE_NAME


def _forged(path: Path, into: Path) -> Path:
    """A pins file that approves the changed tool, as another account would write it."""
    scratch = ToolPins(into / "scratch.json")
    scratch.check({"s__t": CHANGED})
    return into / "scratch.json"


def _refused(pins: ToolPins) -> None:
    pins.reload()
    assert pins.problem is not None and "another account could change it" in pins.problem, pins.problem
    assert "s__t" in pins.check({"s__t": CHANGED})  # the forged approval is not taken


def test_a_pins_file_replaced_by_one_others_may_write_holds_every_tool(pinned, tmp_path: Path) -> None:
    pins, path = pinned
    forged = _forged(path, tmp_path)
    os.replace(forged, path)
    path.chmod(0o666)
    _refused(pins)
    path.chmod(0o600)
    os.utime(path)
    pins.reload()
    assert pins.problem is None


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another account takes root")
def test_a_pins_file_that_is_a_link_into_another_accounts_folder_holds_every_tool(pinned, tmp_path) -> None:
    pins, path = pinned
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    forged = _forged(path, theirs)
    os.chown(theirs, OTHER, OTHER)
    path.unlink()
    path.symlink_to(forged)
    _refused(pins)


def test_a_fifo_in_place_of_the_pins_file_is_refused_not_waited_on(pinned) -> None:
    pins, path = pinned
    path.unlink()
    os.mkfifo(path, 0o600)
    pins.reload()
    assert pins.problem is not None and "not a regular file" in pins.problem, pins.problem


def test_the_opt_out_keeps_it(pinned, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pins, path = pinned
    shutil.copy(_forged(path, tmp_path), path)
    path.chmod(0o666)
    monkeypatch.setenv("SENTINEL_SHARED_FILES", "trust")
    pins.reload()
    assert pins.problem is None
