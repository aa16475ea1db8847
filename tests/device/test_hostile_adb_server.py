"""A hostile adb server (or device) that answers the handshake slowly, wrongly or without end."""

from __future__ import annotations

import asyncio

import pytest

from device_tools.adb_backend import AdbBackend
from device_tools.errors import DeviceUnavailable

pytestmark = pytest.mark.timeout(60)


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
