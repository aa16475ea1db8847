"""The copy of a tool's workspace made as root reads only the workspace's own files; its /proc is read-only.

Found by red team 'swarm' 8 (rt-swarm8): the tool's first process, root, copied its workspace (a directory its
user owns) into the tool's own tmpfs by path: a directory swapped for a link between the walk's listing and
its descent (or a file between its ``lstat`` and its ``open``) was followed, and a root-only file read as root
and given to the tool; a hard link to another's file was copied too. Now the walk is by directory
descriptors, each file opened without following a link and checked to be the one its ``lstat`` saw, and an
entry that is not the workspace owner's own, or a second name of a file, refuses the run. And the /proc a
tool's pid namespace mounts was writable: ``comm``, ``oom_score_adj``, ``timerslack_ns``, its ``mem``."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from tests.swarm.support.tool_processes import KOTLIN, TOOL_PYTHON, script_tools

from sentinel_mcp.swarm import tool_files
from sentinel_mcp.swarm.tool_pids import pids_here

pytestmark = [pytest.mark.timeout(120)]
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the copy is made by a root gateway's tool only")

_TRIES = 2000  # main read the secret 15 times in 2,000 copies on a loaded 2-core machine


def _copies_of(secret: str, to: Path) -> int:
    found = 0
    for top, _, files in os.walk(to):
        for name in files:
            p = Path(top) / name
            if not p.is_symlink() and p.read_text() == secret:
                found += 1
    return found


def _copied(src: Path, to: Path) -> None:
    held = os.open(src, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)  # as the tool's first process holds it
    try:
        tool_files._copied(held, str(to))
    finally:
        os.close(held)


def _secret_dir(tmp_path: Path) -> Path:
    secret = tmp_path / "secret"
    secret.mkdir(mode=0o700)
    (secret / "key").write_text("SECRET")
    (secret / "key").chmod(0o600)
    return secret


@needs_root
def test_a_directory_swapped_for_a_link_while_the_workspace_is_copied_is_not_followed(tmp_path) -> None:
    """Another process of the workspace's user swaps a directory of it for a link to a root-only one, again
    and again, while it is copied: no copy holds the root-only file (a copy refused is the run refused)."""
    secret = _secret_dir(tmp_path)
    src = tmp_path / "src"
    src.mkdir()
    stop = threading.Event()

    def swapper() -> None:
        d, spare = src / "d", src / "t"
        while not stop.is_set():
            for step in (
                lambda: (spare.mkdir(), (spare / "key").write_text("plain"), spare.rename(d)),
                lambda: (os.symlink(secret, spare), spare.rename(d)),
                lambda: shutil.rmtree(d),
                lambda: spare.rename(d),
                lambda: d.unlink(),
            ):
                try:
                    step()
                except OSError:
                    pass

    swapping = threading.Thread(target=swapper, daemon=True)
    swapping.start()
    read = refused = 0
    try:
        for i in range(_TRIES):
            to = tmp_path / f"to{i}"
            to.mkdir()
            try:
                _copied(src, to)
            except OSError:
                refused += 1
            read += _copies_of("SECRET", to)
            shutil.rmtree(to)
    finally:
        stop.set()
        swapping.join()
    assert read == 0, f"the root-only file was copied {read} times in {_TRIES} ({refused} refused)"


@needs_root
@pytest.mark.parametrize("kind", ["hard link to a root-only file", "a file of another user"])
def test_a_file_not_the_workspaces_own_refuses_the_copy(tmp_path, kind) -> None:
    secret = _secret_dir(tmp_path)
    src = tmp_path / "src"
    src.mkdir()
    (src / "A.kt").write_text("class A\n")
    if kind.startswith("hard link"):
        os.link(secret / "key", src / "key")
        owner = 0  # the workspace and its own file are root's here: the link alone is refused
    else:
        shutil.copy(secret / "key", src / "key")
        owner = 65534  # the workspace is the tool's user's; the file left root's
        os.chown(src, owner, owner)
        os.chown(src / "A.kt", owner, owner)
    to = tmp_path / "to"
    to.mkdir()
    with pytest.raises(OSError, match="not the workspace's own file"):
        _copied(src, to)
    assert _copies_of("SECRET", to) == 0


@needs_root
def test_the_workspaces_own_files_dirs_and_links_are_copied(tmp_path) -> None:
    src = tmp_path / "src"
    (src / "app" / "res").mkdir(parents=True)
    (src / "app" / "A.kt").write_text("class A\n")
    (src / "app" / "A.kt").chmod(0o640)
    os.symlink("/etc/hostname", src / "app" / "link")
    for p in (src, src / "app", src / "app" / "res", src / "app" / "A.kt"):
        os.chown(p, 65534, 65534)
    os.lchown(src / "app" / "link", 65534, 65534)
    to = tmp_path / "to"
    to.mkdir()
    _copied(src, to)
    assert (to / "app" / "A.kt").read_text() == "class A\n"
    copied = (to / "app" / "A.kt").stat()
    assert copied.st_mode & 0o777 == 0o640 and copied.st_uid == 65534
    assert os.readlink(to / "app" / "link") == "/etc/hostname" and (to / "app" / "res").is_dir()


@pytest.mark.usefixtures("tools_reach_tmp_path")
@pytest.mark.skipif(not (tool_files.files_here() and pids_here()), reason="no pid namespace for tools here")
async def test_a_tool_can_write_none_of_its_proc(tmp_path) -> None:
    said = tmp_path / "said.txt"
    script = (
        f"#!{TOOL_PYTHON}\nimport os, sys\nout = open({str(said)!r}, 'w')\n"
        "for name, text in (('comm', 'gateway'), ('oom_score_adj', '1000'), ('timerslack_ns', '1'),"
        " ('coredump_filter', '0x7f'), ('clear_refs', '1'), ('sched', '0'), ('attr/current', 'x'),"
        " ('task/%d/comm' % os.getpid(), 'x'), ('../sys/kernel/ns_last_pid', '1')):\n"
        "    try:\n"
        "        with open('/proc/self/' + name, 'w') as f:\n"
        "            f.write(text)\n"
        "        out.write('WROTE %s\\n' % name)\n"
        "    except OSError as e:\n"
        "        out.write('REFUSED %s %s\\n' % (name, e.errno))\n"
        "out.write('COMM ' + open('/proc/self/comm').read())\nsys.exit(1)\n"
    )
    await script_tools(tmp_path, script).check_kotlin(KOTLIN)
    ran = said.read_text()
    assert "WROTE" not in ran and "COMM gateway" not in ran, ran
    assert ran.count("REFUSED") == 9, ran
