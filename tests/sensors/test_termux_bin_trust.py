"""The ``termux-*`` programs Sentinel runs are judged before every run (``core/trusted_code.py``): one another
account could change (writable by group or others, owned by another account, in a folder another account
may write or owns, reached through a link another account may repoint) is never run, and one changed so while
Sentinel runs stops being run. Before, whatever ``termux_bin_dir`` (or ``$PATH``) held by that name ran as
Sentinel's user: whoever could write the folder ran code as Sentinel."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from device_tools.sensors.errors import SourceUnavailable
from device_tools.sensors.sources.termux import TermuxSource
from sentinel_mcp.core.sensor_kinds import SensorKind
from tests.sensors.sensors_support import FIXTURES

pytestmark = pytest.mark.timeout(60)
OTHER = 12345
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another account takes root")


def _battery(folder: Path, marker: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "termux-battery-status"
    # the tools by full name: some tests run it with a PATH of nothing else
    exe.write_text(f"#!/bin/sh\n{shutil.which('touch')} {marker}\n"
                   f"{shutil.which('cat')} {FIXTURES / 'termux_battery.json'}\n")
    exe.chmod(0o755)
    return exe


@pytest.fixture
def home(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    return tmp_path


async def _runs(src: TermuxSource, marker: Path) -> bool:
    try:
        await src.read(SensorKind.battery)
    except SourceUnavailable as e:
        assert "another account could change it" in str(e), e
        assert not marker.exists()
        return False
    assert marker.exists()
    marker.unlink()
    return True


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
async def test_a_program_others_may_write_is_not_run(home: Path, mode: int) -> None:
    marker = home / "ran"
    exe = _battery(home / "bin", marker)
    src = TermuxSource(str(exe.parent), timeout=10)
    assert await _runs(src, marker)
    exe.chmod(mode)
    if mode == 0o775 and os.stat(exe).st_gid == os.getegid():
        os.chown(exe, -1, os.getegid() + 4242) if os.geteuid() == 0 else pytest.skip("own group")
    assert not await _runs(src, marker)  # changed while running: the next run is refused
    exe.chmod(0o755)
    assert await _runs(src, marker)


async def test_a_bin_dir_others_may_write_is_not_run_from(home: Path) -> None:
    marker = home / "ran"
    exe = _battery(home / "bin", marker)
    src = TermuxSource(str(exe.parent), timeout=10)
    exe.parent.chmod(0o777)  # anybody may put a termux-battery-status of their own there
    assert not await _runs(src, marker)
    exe.parent.chmod(0o1777)  # sticky: others may add names, never replace this account's program
    assert await _runs(src, marker)


async def test_a_folder_higher_up_others_may_write_is_refused(home: Path) -> None:
    marker = home / "ran"
    exe = _battery(home / "a" / "b" / "bin", marker)
    (home / "a").chmod(0o777)  # whoever may write it can rename b away and put their own b/bin there
    src = TermuxSource(str(exe.parent), timeout=10)
    assert not await _runs(src, marker)


async def test_a_program_that_is_a_link_into_a_shared_folder_is_refused(home: Path) -> None:
    marker = home / "ran"
    real = _battery(home / "shared", marker)
    (home / "shared").chmod(0o777)
    (home / "bin").mkdir()
    (home / "bin" / "termux-battery-status").symlink_to(real)
    assert not await _runs(TermuxSource(str(home / "bin"), timeout=10), marker)


@as_root
async def test_a_program_or_folder_another_account_owns_is_refused(home: Path) -> None:
    marker = home / "ran"
    exe = _battery(home / "bin", marker)
    src = TermuxSource(str(exe.parent), timeout=10)
    os.chown(exe, OTHER, OTHER)  # mode still 0755: its owner may rewrite it
    assert not await _runs(src, marker)
    os.chown(exe, 0, 0)
    os.chown(exe.parent, OTHER, OTHER)
    assert not await _runs(src, marker)
    os.chown(exe.parent, 0, 0)
    assert await _runs(src, marker)


async def test_a_program_swapped_for_one_others_may_write_is_not_run(home: Path) -> None:
    marker = home / "ran"
    exe = _battery(home / "bin", marker)
    src = TermuxSource(str(exe.parent), timeout=10)
    assert await _runs(src, marker)
    swapped = _battery(home / "bin2", marker)
    swapped.chmod(0o777)
    os.replace(swapped, exe)  # the name now names a file anybody may rewrite
    assert not await _runs(src, marker)


async def test_path_lookups_skip_relative_and_shared_entries(home: Path, monkeypatch) -> None:
    marker = home / "ran"
    planted = _battery(home / "planted", marker)
    planted.parent.chmod(0o777)
    good = _battery(home / "good", marker)
    monkeypatch.chdir(planted.parent)
    for path in (f"{os.pathsep}{good.parent}", f".{os.pathsep}{good.parent}",
                 f"planted{os.pathsep}{good.parent}", f"{planted.parent}{os.pathsep}{good.parent}"):
        monkeypatch.setenv("PATH", path)  # the planted one comes first each time: never run
        planted.write_text("#!/bin/sh\nexit 7\n")
        assert await _runs(TermuxSource(None, timeout=10), marker), path
    monkeypatch.setenv("PATH", str(planted.parent))  # only a shared one: refused, saying why
    assert not await _runs(TermuxSource(None, timeout=10), marker)


async def test_the_opt_out_keeps_it(home: Path, monkeypatch) -> None:
    marker = home / "ran"
    exe = _battery(home / "bin", marker)
    exe.parent.chmod(0o777)
    monkeypatch.setenv("SENTINEL_SHARED_FILES", "trust")
    assert await _runs(TermuxSource(str(exe.parent), timeout=10), marker)
