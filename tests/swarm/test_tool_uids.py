"""Two verification tools running at once cannot reach each other: each runs as a uid of its own.

Found by red team 'swarm' 4: every tool of a root gateway ran as ``nobody``. A build's tool (hostile code: a
build step's plugins, a parser's bug) could signal another build's tool running at the same time, trace it
(ptrace: the same uid, and no Yama here) and so rewrite its verdict, and read or write its workspace (the
other build's sources). Now each run leases a uid of its own from a range (``tool_uids.py``)."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from tests.swarm.support.tool_processes import (
    KOTLIN,
    TOOL_PYTHON,
    pid_here,
    record_sh,
    recorded,
    script_tools,
)

from sentinel_mcp.swarm.tool_uids import lease_uid
from sentinel_mcp.swarm.tool_user import NoToolUser

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.usefixtures("tools_reach_tmp_path"),
    pytest.mark.skipif(os.geteuid() != 0, reason="a gateway not run as root cannot change its tools' user"),
]

_LOOKS = 6000  # of a stand-in tool waiting for the other (bounded by count)

# the other build's tool: says who it is, and waits (busy) until the attacker is done
_VICTIM = (
    "#!/bin/sh\n{record}\n"
    "for i in $(seq {looks}); do [ -e {board}/attacker.done ] && break; sleep 0.01; done\n"
    'echo "victim $(id -u) ended"\nexit 1\n'
)

_ATTACKER = """#!{python}
import ctypes, os, sys, time
board = {board!r}
for _ in range({looks}):
    if os.path.exists(board + "/victim.pid"):
        break
    time.sleep(0.01)
pid = int(open(board + "/victim.pid").read())
said = ["attacker", str(os.getuid())]
libc = ctypes.CDLL(None, use_errno=True)
def ptrace():  # attach (the victim stops), then, once stopped, detach (it goes on)
    if libc.ptrace(16, pid, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "ptrace")
    os.waitpid(pid, 0x40000000)  # __WALL
    libc.ptrace(17, pid, 0, 0)
attacks = {{
    "signal": lambda: os.kill(pid, 0),
    "ptrace": ptrace,
    "read": lambda: open(f"/proc/{{pid}}/cwd/app/src/main/java/com/example/A.kt").read(),
    "write": lambda: open(f"/proc/{{pid}}/cwd/planted", "w").write("x"),
    "environ": lambda: open(f"/proc/{{pid}}/environ").read(),
}}
for name, attack in attacks.items():
    try:
        attack()
        said.append("BROKE:" + name)
    except OSError as e:
        said.append(f"{{name}}:refused")
open(board + "/attacker.done", "w").close()
print(" ".join(said))
sys.exit(1)
"""


async def _relayed(board: Path) -> None:
    """The victim's pid as this machine sees it, given to the attacker: a root gateway's tool has a pid
    namespace of its own, and its number there would name a process of the attacker's own."""
    for _ in range(_LOOKS):
        got = recorded(board / "victim.rec")
        if got and (pid := pid_here(got[0])) is not None:
            (board / "victim.pid.tmp").write_text(str(pid))
            (board / "victim.pid.tmp").rename(board / "victim.pid")
            return
        await asyncio.sleep(0.01)


async def test_a_tool_cannot_reach_another_builds_tool_running_at_once(tmp_path) -> None:
    board = tmp_path / "board"
    board.mkdir()
    board.chmod(0o1777)
    # both tools' programs in one directory, given back to each under its own /tmp (``tool_files.py``)
    victim = script_tools(
        tmp_path,
        _VICTIM.format(board=board, looks=_LOOKS, record=record_sh(board / "victim.rec")),
        name="victim",
    )
    attacker = script_tools(
        tmp_path, _ATTACKER.format(python=TOOL_PYTHON, board=str(board), looks=_LOOKS), name="attacker"
    )
    theirs, mine, _ = await asyncio.wait_for(
        asyncio.gather(victim.check_kotlin(KOTLIN), attacker.check_kotlin(KOTLIN), _relayed(board)), 80
    )
    ran = " ".join(mine.notes)
    assert "BROKE" not in ran, ran
    assert all(f"{a}:refused" in ran for a in ("signal", "ptrace", "read", "write", "environ")), ran
    victim_said = " ".join(theirs.notes)
    assert "victim" in victim_said and "ended" in victim_said, victim_said
    assert victim_said.split("victim ")[1].split()[0] != ran.split("attacker ")[1].split()[0]


FIRST = 1_990_000_000  # a range of these tests' own, its leases in a directory of their own


def test_a_uid_a_process_still_runs_with_is_not_leased(tmp_path) -> None:
    """A dead gateway's tool may still run with its uid (its lease freed with the gateway): not leased."""
    leases = tmp_path / "leases"
    left = subprocess.Popen(["sleep", "600"], user=FIRST, group=FIRST, extra_groups=[])
    try:
        for _ in range(20):  # each lease starts at a random place of the range
            lease = lease_uid(FIRST, 2, leases)
            assert lease.uid == FIRST + 1
            lease.release()
        held = lease_uid(FIRST, 2, leases)
        with pytest.raises(NoToolUser, match="no uid of"):
            lease_uid(FIRST, 2, leases)
        held.release()
        assert lease_uid(FIRST, 2, leases).uid == FIRST + 1
    finally:
        left.kill()
        left.wait()


def test_leases_in_a_directory_others_may_write_are_refused(tmp_path) -> None:
    leases = tmp_path / "leases"
    leases.mkdir(mode=0o700)
    leases.chmod(0o777)
    with pytest.raises(NoToolUser, match="only root may write"):
        lease_uid(FIRST, 2, leases)


def test_the_lease_directory_holds_only_leases_held(tmp_path) -> None:
    """Found by red team 'swarm' 5: a file per uid ever leased stayed in /run (a range of 65536 uids, and
    any number of ranges over time). Now a lease's file goes with it, and what a killed gateway left (a file
    no one holds) goes at a later lease; a file held stays."""
    leases = tmp_path / "leases"
    held = lease_uid(FIRST, 4, leases)
    ended = lease_uid(FIRST, 4, leases)
    ended.release()
    assert sorted(os.listdir(leases)) == [str(held.uid)]
    for uid in range(FIRST + 100, FIRST + 100 + 3):  # a killed gateway's (its locks gone with it)
        (leases / str(uid)).touch()
    again = lease_uid(FIRST, 4, leases)
    assert sorted(os.listdir(leases)) == sorted([str(held.uid), str(again.uid)])
    held.release()
    again.release()
    assert os.listdir(leases) == []
