"""A verification tool run by a root gateway runs as an unprivileged user, and cannot take root back.

Found by red team 'swarm' 3: tools ran as the gateway's user, root here. A tool (what parses the models'
hostile output) could move itself out of its cgroup, kill its supervisor, read the owner's token, write in the
store's directory, chmod what is above its workspace, or run a setuid program. Now, with a root gateway, each
tool runs as an unprivileged user (no other groups, ``no_new_privs``), owning its workspace only: a uid of its
own for the run (``tool_uids.py``, red team 'swarm' 4; ``nobody`` for every run before). Each attack below is
a stand-in ``java`` that tries it and prints BROKE when it worked."""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from tests.swarm.support.tool_processes import KOTLIN, script_tools

from sentinel_mcp.identity import owner_token
from sentinel_mcp.storage.private_paths import private_dir
from sentinel_mcp.swarm.toolchain import VerifySettings

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.usefixtures("tools_reach_tmp_path"),
    pytest.mark.skipif(os.geteuid() != 0, reason="a gateway not run as root cannot change its tools' user"),
]

_ATTACKS = {
    # its pid written to the root of each cgroup hierarchy: out of its own cgroup and its caps
    "join the root cgroup": "for p in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/*/cgroup.procs; do\n"
    "  [ -f $p ] && (echo $$ > $p) 2>/dev/null && echo BROKE; done",
    # its parent is its supervisor (which stops it, and all it started, with the gateway)
    "kill its supervisor": "kill -9 $PPID 2>/dev/null && echo BROKE",
    "read the owner's token": 'cat "$TOKEN" 2>/dev/null | grep -q . && echo BROKE',
    "write into the store's directory": 'touch "$STORE/planted" 2>/dev/null && echo BROKE',
    "raise its file size limit": "(ulimit -f unlimited) 2>/dev/null && echo BROKE",
    # its own cgroup's caps (v1's pids and memory hierarchies, or v2's), lifted
    "raise its cgroup's caps": "while IFS=: read -r _ c p; do d=/sys/fs/cgroup/$c$p\n"
    "  for w in \"$d/pids.max max\" \"$d/memory.max max\" \"$d/memory.limit_in_bytes -1\"; do\n"
    "    set -- $w; [ -f $1 ] && (echo $2 > $1) 2>/dev/null && echo BROKE; done; done < /proc/self/cgroup",
    "run su": "su -c 'echo BROKE' root 2>/dev/null </dev/null",
    "run sudo": "sudo -n sh -c 'echo BROKE' 2>/dev/null </dev/null",
    "run a setuid root copy": '[ "$("$SUID" -u)" = 0 ] && echo BROKE',
    "chmod the workspace's parent": "chmod 0777 .. 2>/dev/null && echo BROKE",
}


@pytest.fixture
def gateway_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The gateway's owner token and store directory, made by its own code (their modes are its own), a
    setuid-root program, and the directory the tools' workspaces are made in."""
    data = tmp_path / "data"
    private_dir(data)
    owner_token.load_or_create(data)
    store = data / "store"
    private_dir(store)
    suid = tmp_path / "id-setuid"
    shutil.copy(shutil.which("id") or "/usr/bin/id", suid)
    suid.chmod(0o4755)
    parent = tmp_path / "workspaces"
    parent.mkdir(mode=0o755)
    parent.chmod(0o755)
    monkeypatch.setattr(tempfile, "tempdir", str(parent))
    return {"TOKEN": owner_token.token_path(data), "STORE": store, "SUID": suid, "PARENT": parent}


@pytest.mark.parametrize("attack", list(_ATTACKS))
async def test_a_tool_of_a_root_gateway_cannot_reach_root(tmp_path, gateway_files, attack) -> None:
    where = " ".join(f"{k}='{v}'" for k, v in gateway_files.items())
    script = f'#!/bin/sh\n{where}\necho "as $(id -u):$(id -g) groups $(id -G)"\n{_ATTACKS[attack]}\nexit 1\n'
    tools = script_tools(tmp_path, script)
    report = await tools.check_kotlin(KOTLIN)
    ran = " ".join(report.notes)
    # a uid of its own for the run (``tool_uids.py``), of no account, its gid the same and no other group
    who = re.search(r"as (\d+):(\d+) groups (\d+)$", ran.splitlines()[0])
    assert who is not None and who.group(1) == who.group(2) == who.group(3), ran
    first = VerifySettings().tool_uid_first
    assert first <= int(who.group(1)) < first + VerifySettings().tool_uid_count, ran
    assert "BROKE" not in ran, ran
    assert not (gateway_files["STORE"] / "planted").exists()
    assert stat.S_IMODE(gateway_files["PARENT"].stat().st_mode) == 0o755
    said = tools.describe()
    assert any(n.startswith("tools run as a uid of its own per run") for n in said), said


async def test_a_tool_writes_its_output_in_its_workspace(tmp_path) -> None:
    """Its workspace is its own: it reads the sources the gateway wrote and writes beside them."""
    script = (
        "#!/bin/sh\ncat app/src/main/java/com/example/A.kt >/dev/null && mkdir gen && echo x > gen/R.java "
        "&& echo WROTE\nexit 1\n"
    )
    report = await script_tools(tmp_path, script).check_kotlin(KOTLIN)
    assert "WROTE" in " ".join(report.notes), report.notes


async def test_a_missing_or_privileged_tool_user_runs_no_tool(tmp_path) -> None:
    for user, why in (("no-such-user-here", "does not exist"), ("root", "is privileged")):
        marker = tmp_path / f"ran-{user}"
        tools = script_tools(tmp_path, f"#!/bin/sh\ntouch {marker}\n", tool_user=user)
        report = await tools.check_kotlin(KOTLIN)
        assert not marker.exists()
        assert any(why in n for n in report.notes), report.notes
        assert any(n.startswith("no tool run:") for n in tools.describe())
