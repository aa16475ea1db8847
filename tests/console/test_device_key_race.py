"""Two processes (replicas sharing a data directory, or a console and a CLI) making the console's device key
(``console/sign_in_devices.py``) at once agree on one key. The key file was created empty (``O_EXCL``) and
written after: a second process opening it between the two read nothing and fell back to a key of its own, so
each signed its own device cookies and refused the other's. Now the key is written to a file of its own first
and linked into place whole (no process ever reads a partial key); the loser of the link reads the winner's.

Real processes, ordered by events (a pipe each way), no timing: process A stops where its key is being made
(``secrets.token_bytes``: on main, with the key file already there and empty); process B runs whole; A goes
on."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sentinel_mcp.console.sign_in_devices import KEY_BYTES, KEY_FILE, SignInDevices

pytestmark = pytest.mark.timeout(120)

# the paused step: ``where`` is "token_bytes" (while the key is made) or "link" (as it is put in place)
_CHILD = textwrap.dedent("""
    import json, os, secrets, sys
    from pathlib import Path
    from sentinel_mcp.console import sign_in_devices

    where = sys.argv[2]

    def pause():
        print("paused", flush=True)
        assert sys.stdin.readline() == "go\\n"

    if where == "token_bytes":
        real = secrets.token_bytes
        def token_bytes(n=None):
            if n == sign_in_devices.KEY_BYTES:
                pause()
            return real(n)
        secrets.token_bytes = token_bytes
    elif where == "link":
        real_link = os.link
        def link(*a, **k):
            pause()
            return real_link(*a, **k)
        os.link = link
    devices = sign_in_devices.SignInDevices(Path(sys.argv[1]))
    print(json.dumps({"key": devices._key.hex(), "token": devices.issue("alice")}), flush=True)
""")


def _child(data_dir: Path, where: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", _CHILD, str(data_dir), where], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen[str]) -> dict[str, str]:
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("where", ["token_bytes", "link"])
def test_two_processes_making_the_key_at_once_agree_on_one(tmp_path, where):
    first = _child(tmp_path, where)
    assert first.stdout is not None and first.stdin is not None
    if where == "link" and first.stdout.readline() != "paused\n":  # a build without the link: not stopped
        pytest.fail("the key was not put in place by a link")
    if where == "token_bytes":
        assert first.stdout.readline() == "paused\n"
    second = _finish(_child(tmp_path, "none"))  # runs whole while the first is stopped
    first.stdin.write("go\n")
    first.stdin.flush()
    made = _finish(first)
    assert made["key"] == second["key"], "each process signs with a key of its own"
    kept = (tmp_path / KEY_FILE).read_bytes()
    assert kept.hex() == made["key"] and len(kept) == KEY_BYTES
    # each one's cookie is the other's, and a third process (a restart) takes both
    third = SignInDevices(tmp_path)
    assert third.device(made["token"], "alice") and third.device(second["token"], "alice")
    assert [p.name for p in tmp_path.iterdir()] == [KEY_FILE]  # no half-made key file left beside it


def test_many_processes_at_once_agree_on_one_key(tmp_path):
    """Eight started together, none stopped: one key among them."""
    procs = [_child(tmp_path, "none") for _ in range(8)]
    keys = {_finish(p)["key"] for p in procs}
    assert keys == {(tmp_path / KEY_FILE).read_bytes().hex()}


@pytest.mark.parametrize("content", [b"", b"short", b"x" * (KEY_BYTES + 1)])
def test_a_cut_key_file_is_not_read_as_a_key(tmp_path, content):
    """A key file of the wrong length (a crash of an older build between create and write): not a key of
    any length but ``KEY_BYTES``; the process uses its own (it signs nothing another takes)."""
    (tmp_path / KEY_FILE).write_bytes(content)
    (tmp_path / KEY_FILE).chmod(0o600)
    devices = SignInDevices(tmp_path)
    assert len(devices._key) == KEY_BYTES and devices._key != content[:KEY_BYTES]


def test_a_key_that_cannot_be_written_is_this_processs_own(tmp_path, monkeypatch):
    """A full disk: the process signs with its own key and leaves no file (a cut one would be read next)."""
    import errno
    import os

    def full(_fd: int, _data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    devices = SignInDevices(tmp_path)
    monkeypatch.undo()
    assert len(devices._key) == KEY_BYTES and list(tmp_path.iterdir()) == []
    later = SignInDevices(tmp_path)  # the disk has room again: a key kept for good
    assert (tmp_path / KEY_FILE).read_bytes() == later._key != devices._key
