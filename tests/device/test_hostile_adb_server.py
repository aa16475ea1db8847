"""A hostile adb server (or device) that answers the handshake slowly, wrongly or without end."""

from __future__ import annotations

import asyncio

import pytest

from device_tools import adb_backend
from device_tools.adb_backend import AdbBackend
from device_tools.errors import CommandTooLong, DeviceUnavailable

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _little_slack(monkeypatch: pytest.MonkeyPatch) -> None:
    """A trickle never ends: each cut waits out the command's timeout plus the slack past it, 2 s in
    production (a slow device's handshake); a little here, which cuts at the same point of the code."""
    monkeypatch.setattr(adb_backend, "HANDSHAKE_SLACK", 0.2)


def trickled(head: bytes):
    async def answer(w) -> None:
        w.write(head)
        while True:  # one byte at a time, each well inside any per-read timeout, forever
            w.write(b"a")
            await w.drain()
            await asyncio.sleep(0.05)

    return answer


# (the request trickled, what the server says before it trickles)
HANDSHAKES = [
    ("host:devices", b"OKAY" + b"ffff"),  # a device list that never ends
    ("host:devices", b"FAIL" + b"ffff"),  # a refusal whose reason never ends
    ("host:version", b"OKAY" + b"ffff"),  # the version asked before every transport
    ("wm size", b"FAIL" + b"ffff"),  # the device refuses the command, slowly
]


@pytest.mark.parametrize(("request_", "head"), HANDSHAKES)
async def test_a_trickled_handshake_is_cut_at_the_command_deadline(fake_adb, request_, head):
    fake_adb.raw[request_] = trickled(head)
    backend = AdbBackend(serial=fake_adb.serial, port=fake_adb.port)
    with pytest.raises(DeviceUnavailable, match="in time"):
        await backend.shell(["wm", "size"], timeout=1.0)


async def test_a_trickled_handshake_is_cut_while_waiting_for_a_key_too(fake_adb):
    fake_adb.raw["host:devices"] = trickled(b"OKAY" + b"ffff")
    backend = AdbBackend(serial=fake_adb.serial, port=fake_adb.port)
    with pytest.raises(DeviceUnavailable, match="in time"):
        await backend.wait_for_key("KEY_VOLUMEUP", timeout=1.0)


@pytest.mark.parametrize("status", [b"OKAX", b"\x00\x00\x00\x00", b"fail", b"OK"])
async def test_a_wrong_status_word_is_a_clear_refusal(fake_adb, status):
    async def answer(w) -> None:
        w.write(status)
        await w.drain()

    fake_adb.raw["wm size"] = answer
    backend = AdbBackend(serial=fake_adb.serial, port=fake_adb.port)
    with pytest.raises(DeviceUnavailable) as refused:
        await backend.shell(["wm", "size"], timeout=5.0)
    assert str(refused.value).isprintable()


async def test_after_a_cut_handshake_the_next_command_works(fake_adb):
    fake_adb.raw["host:devices"] = trickled(b"OKAY" + b"ffff")
    backend = AdbBackend(serial=fake_adb.serial, port=fake_adb.port)
    with pytest.raises(DeviceUnavailable, match="in time"):
        await backend.shell(["wm", "size"], timeout=1.0)
    del fake_adb.raw["host:devices"]
    assert "1080x2400" in await backend.shell(["wm", "size"], timeout=5.0)


@pytest.mark.parametrize("size", [65_536, 70_000, 300_000])
async def test_a_command_past_the_adb_requests_length_is_refused_before_it_is_sent(fake_adb, size):
    """A request's length is four hex digits on the wire: a longer one went out as five, and the adb server
    read its last digit and the command after it as the next request."""
    backend = AdbBackend(serial=fake_adb.serial, port=fake_adb.port)
    for send in (backend.shell, backend.exec_out):
        with pytest.raises(CommandTooLong, match="too long"):
            await send(["content", "insert", "--bind", "description:s:" + "a" * size], timeout=5.0)
    assert not any("content" in s or not s.startswith(("host", "shell", "exec")) for s in fake_adb.log)
    assert await backend.shell(["wm", "size"], timeout=5.0)  # the connection is still in step


async def test_a_calendar_event_too_long_to_send_is_refused_and_nothing_is_sent(fake_adb, tmp_path):
    from tests.device.device_helpers import Answers, adb_server, connect

    answers = Answers("yes")
    async with connect(adb_server(fake_adb, tmp_path), answers=answers) as client:
        r = await client.call_tool(
            "calendar_create",
            {"title": "Lunch", "start": "2026-12-03T12:00:00+00:00", "description": "x" * 70_000},
        )
    # the description's own bound (arg_shapes.MAX_DESCRIPTION) refuses it first, below adb's request length
    assert r.is_error and "at most 30000 characters" in r.content[0].text, r.content[0].text
    assert not any("content insert" in c for c in fake_adb.device_commands())
