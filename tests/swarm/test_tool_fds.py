"""A verification tool inherits none of the gateway's open files.

Red team 'swarm' 7 looked for it and found it closed (a guard, passing on main): the gateway holds its audit
database, its sockets and its own /proc directory open; marked inheritable (as a library may leave one), each
would be the tool's to read or write past its view of the files and its socket filter. The gateway starts
the supervisor with every descriptor but 0, 1 and 2 closed, and the supervisor opens none it passes on."""

from __future__ import annotations

import os
import socket
import sqlite3

import pytest

from tests.swarm.support.tool_processes import KOTLIN, TOOL_PYTHON, script_tools

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("tools_reach_tmp_path")]


async def test_a_tool_inherits_none_of_the_gateways_open_files(tmp_path) -> None:
    db = sqlite3.connect(tmp_path.parent / "audit.db")
    db.execute("CREATE TABLE t (x)")
    held = [os.open(tmp_path.parent / "audit.db", os.O_RDWR), os.open("/proc/self", os.O_RDONLY)]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held.append(listener.fileno())
    try:
        for fd in held:
            os.set_inheritable(fd, True)
        script = (
            f"#!{TOOL_PYTHON}\nimport os, sys\nseen = {{}}\nfor n in os.listdir('/proc/self/fd'):\n"
            "    try:\n        seen[int(n)] = os.readlink(f'/proc/self/fd/{n}')\n"
            "    except OSError:\n        pass\n"  # the listing's own, closed by now
            "print('fds', sorted(seen), 'in', seen.get(0), list(seen.values()))\nsys.exit(1)\n"
        )
        ran = " ".join((await script_tools(tmp_path, script).check_kotlin(KOTLIN)).notes)
        assert "fds [0, 1, 2] in /dev/null" in ran, ran
    finally:
        listener.close()
        for fd in held[:2]:
            os.close(fd)
        db.close()
