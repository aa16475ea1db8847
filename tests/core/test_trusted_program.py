"""Helper programs found on ``PATH`` or named in the config (Tesseract, the swarm's aapt, java and ktlint) are
used only when no other account could change them (``core/trusted_code.find_program``): a relative or empty
``PATH`` entry is never searched, an entry another account may write is passed over for the next, and a
configured tool (or the jar or platform file it runs) that another account could change is not used.
Before, ``shutil.which`` took the first of that name wherever it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.open_way import open_the_way

from device_tools.ocr import OcrError, tesseract_path
from sentinel_mcp.core.trusted_code import ProgramRefused, find_program
from sentinel_mcp.swarm.toolchain import Toolchain, VerifySettings


def _program(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    return exe


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    tmp_path.chmod(0o755)
    monkeypatch.delenv("SENTINEL_SHARED_FILES", raising=False)
    return tmp_path


def test_entries_are_searched_in_order_skipping_relative_and_shared_ones(home: Path, monkeypatch) -> None:
    shared = _program(home / "shared", "tool").parent
    shared.chmod(0o777)
    good = _program(home / "good", "tool")
    _program(home / "cwd", "tool")
    monkeypatch.chdir(home / "cwd")
    for search in (f"{shared}:{good.parent}", f".:{good.parent}", f":{good.parent}", f"cwd:{good.parent}",
                   f"../cwd:{good.parent}"):
        assert find_program("tool", search) == str(good), search
    assert find_program("tool", f"{home / 'nothing'}") is None
    with pytest.raises(ProgramRefused, match="another account could change it"):
        find_program("tool", str(shared))
    assert find_program("tool", ".") is None  # relative only: never searched


def test_a_program_named_with_a_slash_is_judged(home: Path) -> None:
    exe = _program(home / "bin", "tool")
    assert find_program(str(exe)) == str(exe)
    exe.chmod(0o757)
    with pytest.raises(ProgramRefused):
        find_program(str(exe))


def test_tesseract_planted_where_others_may_write_is_refused(home: Path, monkeypatch) -> None:
    shared = _program(home / "shared", "tesseract").parent
    shared.chmod(0o777)
    monkeypatch.setenv("PATH", str(shared))
    with pytest.raises(OcrError, match="another account could change it"):
        tesseract_path()


def test_a_swarm_tool_others_may_change_is_not_used(home: Path) -> None:
    open_the_way(home)  # a root gateway's tools run as nobody, who must reach them (swarm/tool_reach.py)
    home.chmod(home.stat().st_mode & 0o7777 | 0o711)
    aapt = _program(home / "tools", "aapt")
    java = _program(home / "tools", "java")
    jar = home / "tools" / "ktlint.jar"
    jar.write_bytes(b"PK")
    platform = home / "tools" / "framework-res.apk"
    platform.write_bytes(b"PK")
    settings = VerifySettings(aapt=str(aapt), java=str(java), ktlint=str(jar), platform=str(platform))
    chain = Toolchain(settings)
    found = (chain.aapt, chain.java, chain.ktlint, chain.platform)
    assert found == tuple(map(str, (aapt, java, jar, platform)))
    for f in (aapt, java, jar, platform):
        f.chmod(0o666 if f.suffix else 0o777)
    chain = Toolchain(settings)
    assert (chain.aapt, chain.java, chain.ktlint, chain.platform) == (None, None, None, None)
