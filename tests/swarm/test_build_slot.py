"""The one build slot (``swarm.lock``) between real processes: the gateway and another process on the same
data directory (``sentinel-mcp swarm build`` in a terminal, a second gateway) each take it with ``TaskLock``.

The slot was a file created with O_EXCL and then written with its owner's pid: a process that found the file
while its owner had created it but not yet written it (empty: no pid) took the owner for dead, removed the
file and took the slot too, so two builds ran at once. The slot now belongs to whoever holds the kernel's lock
on the file (dropped when that process dies, kill -9 included), whatever the file says."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from mcp import Client
from tests.swarm.support.scripted_model import SPEC
from tests.swarm.support.swarm_fixtures import FAST_OPENAI, NO_TOOLS, gateway_config

from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)

# another process taking the slot, paused after it has the file and before it has written its pid (as a
# process is, for a moment, whenever the scheduler or a debugger stops it there)
TAKER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from sentinel_mcp.swarm import task_lock

    def paused(*args, **kwargs):
        print("taking", flush=True)
        time.sleep(600)

    task_lock.json.dump = paused
    task_lock.json.dumps = paused
    task_lock.TaskLock(Path(sys.argv[1])).acquire("t20260101-000000-aaaaaa")
    print("held", flush=True)
    time.sleep(600)
    """
)


def _taker(lock: Path) -> subprocess.Popen[str]:
    lock.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-c", TAKER, str(lock)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        start_new_session=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line in ("taking", "held"), proc.stderr.read() if proc.stderr else line
    return proc


async def test_a_process_taking_the_slot_holds_it_before_it_has_written_its_pid(tmp_path, openai_env) -> None:
    taker = _taker(tmp_path / "swarm" / "swarm.lock")
    try:
        config = gateway_config(tmp_path)
        async with running_gateway(config) as rt, Client(rt.front.server, mode="legacy") as c:
            refused = await c.call_tool("swarm__swarm_build", {"spec": SPEC, "wait": True})
            assert refused.is_error and "another build is running" in refused.content[0].text, (
                refused.content[0].text
            )
            assert openai_env.calls() == []  # no second build asked the model anything

            # its holder killed (-9, mid-way): the slot is free again, for a build that completes
            os.killpg(taker.pid, signal.SIGKILL)
            taker.wait(timeout=30)
            done = await c.call_tool("swarm__swarm_build", {"spec": SPEC, "wait": True})
            assert not done.is_error and done.structured_content["state"] == "COMPLETED", done.content[0].text
    finally:
        if taker.poll() is None:
            os.killpg(taker.pid, signal.SIGKILL)
            taker.wait(timeout=30)


async def test_a_build_whose_process_was_killed_reads_as_ended_to_a_gateway_already_running(
    tmp_path, openai_env
) -> None:
    """A CLI build (``sentinel-mcp swarm build`` in a terminal) on the gateway's data directory, killed -9
    mid-build while the gateway's swarm built-in was already started: the gateway ended such builds only when
    it started, so swarm_status and swarm_list said EXECUTING/PLANNING until the gateway restarted. Now a
    build no live process holds the slot for is ended (FAILED, interrupted) when it is looked at."""
    cfg_file = tmp_path / "sentinel.json"
    section = {"verify": NO_TOOLS, "backend": "openai", "openai": FAST_OPENAI}
    cfg_file.write_text(json.dumps({"sentinel": {"data_dir": str(tmp_path), "swarm": section}}))
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SPEC))
    async with running_gateway(gateway_config(tmp_path)) as rt, Client(rt.front.server, mode="legacy") as c:
        assert (await c.call_tool("swarm__swarm_list", {})).structured_content["tasks"] == []  # started
        openai_env.hold.clear()  # the CLI build's planner call waits: it is mid-build when it is killed
        proc = subprocess.Popen(
            [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg_file), "swarm", "build", str(spec)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
            start_new_session=True,
        )
        try:
            with anyio.fail_after(60):
                while not openai_env.requests:
                    await anyio.sleep(0.02)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            openai_env.hold.set()
        listed = (await c.call_tool("swarm__swarm_list", {})).structured_content["tasks"]
        assert [t["state"] for t in listed] == ["FAILED"], listed
        asked = await c.call_tool("swarm__swarm_status", {"task_id": listed[0]["task_id"]})
        status = asked.structured_content
        assert status["state"] == "FAILED" and status["error"].startswith("interrupted"), status
