"""The termux backend reads a command's output under a byte cap, as the adb backend does: the accessibility
dump is the screen's (any app's words), and a command that floods is killed with its process group, not read
into memory until it ends."""

from __future__ import annotations

import shlex
import stat
from pathlib import Path

import pytest

from device_tools.errors import DeviceCommandFailed
from device_tools.termux_backend import TermuxBackend

pytestmark = pytest.mark.timeout(60)


def program(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


async def test_a_dump_that_floods_is_refused_at_its_cap_and_the_command_killed(tmp_path, monkeypatch):
    b = tmp_path / "bin"
    b.mkdir()
    pid_file = tmp_path / "pid"
    # 40 MB, then it would linger: read whole, it would fill memory and hold a thread until it ended
    program(b, "termux-accessibility", f"echo $$ > {shlex.quote(str(pid_file))}\n"
                                       "head -c 40000000 /dev/zero\nsleep 30")
    monkeypatch.setenv("PATH", f"{b}:/usr/bin:/bin")
    with pytest.raises(DeviceCommandFailed, match="printed more than 8,008,192 bytes"):
        await TermuxBackend().exec_out(["uiautomator", "dump", "/dev/tty"], timeout=20)
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


async def test_output_under_the_cap_is_read_whole(tmp_path, monkeypatch):
    b = tmp_path / "bin"
    b.mkdir()
    program(b, "termux-accessibility", "printf '<hierarchy/>'; printf ' err' >&2")
    monkeypatch.setenv("PATH", f"{b}:/usr/bin:/bin")
    out = await TermuxBackend().exec_out(["uiautomator", "dump", "/dev/tty"], timeout=20)
    assert out == b"<hierarchy/> err"
