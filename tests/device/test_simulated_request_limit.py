"""The simulated phone refuses what the real adb path refuses: a request past adb's four-hex-digit length
(65,535 bytes of ``shell:`` or ``exec:`` and the shell-quoted command), with the same error, before anything
reaches it. Before, it took a command of any length, so tests on it never met the limit a phone has."""

from __future__ import annotations

import shlex

import pytest
from tests.device.device_helpers import Answers, connect, sim_server

from device_tools.adb_backend import AdbBackend
from device_tools.errors import CommandTooLong
from device_tools.simulated import SimulatedDevice

pytestmark = pytest.mark.timeout(60)


def command_of(size: int, service: str = "shell:") -> list[str]:
    """``content insert`` whose request (``service`` + the quoted command) is exactly ``size`` bytes."""
    base = ["content", "insert", "--bind", "description:s:"]
    pad = size - len((service + shlex.join(base)).encode())
    return [*base[:-1], base[-1] + "a" * pad]


@pytest.mark.parametrize("size", [65_536, 70_000, 300_000])
async def test_a_command_past_adbs_request_length_is_refused_as_adb_refuses_it(size):
    sim = SimulatedDevice()
    argv = command_of(size)
    with pytest.raises(CommandTooLong) as simulated:
        sim.check_sendable(argv)
    with pytest.raises(CommandTooLong) as real:
        AdbBackend(serial="x").check_sendable(argv)
    assert str(simulated.value) == str(real.value) and "too long for adb" in str(real.value)
    for send, kind in ((sim.shell, "shell:"), (sim.exec_out, "exec:")):
        with pytest.raises(CommandTooLong, match="too long for adb"):
            await send(command_of(size, kind))
    assert sim.commands == []  # nothing reached the phone


async def test_a_command_at_the_limit_is_sent_and_one_byte_more_is_not():
    sim = SimulatedDevice()
    sim.check_sendable(command_of(65_535))
    await sim.shell(command_of(65_535))
    await sim.exec_out(command_of(65_535, "exec:"))
    assert len(sim.commands) == 2
    with pytest.raises(CommandTooLong):
        await sim.exec_out(command_of(65_536, "exec:"))
    with pytest.raises(CommandTooLong):
        sim.check_sendable(command_of(65_536))


async def test_a_calendar_event_too_long_for_adb_is_refused_on_the_simulated_phone_before_asking(tmp_path):
    answers = Answers("yes")
    server = sim_server(tmp_path)
    async with connect(server, answers=answers) as client:
        r = await client.call_tool("calendar_create", {"title": "Lunch", "start": "2026-12-03T12:00:00+00:00",
                                                       "description": "x" * 70_000})
    # the description's own bound (arg_shapes.MAX_DESCRIPTION) refuses it first, below adb's request length
    assert r.is_error and "at most 30000 characters" in r.content[0].text, r.content[0].text
    assert answers.questions == []
