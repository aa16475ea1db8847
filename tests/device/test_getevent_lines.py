"""Only a key event line of ``getevent -l`` is a Volume Up press. The watch read any line holding the words
KEY_VOLUMEUP and DOWN anywhere as the person's yes, and getevent prints more than events: each input device
it opens, at the start and whenever one is added while it watches (a Bluetooth keyboard, gamepad or headset
connecting), is announced with its name, and a name is whatever the device calls itself. A peripheral named
``x" KEY_VOLUMEUP DOWN "y`` said yes for the person without a press. Over the fake adb server (the real
backend, its real stream): the lines below are never a press, and the real event line still is."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Awaitable, Callable

import pytest

from device_tools.adb_backend import GETEVENT_WATCH, AdbBackend

pytestmark = pytest.mark.timeout(60)
REAL_PRESS = b"/dev/input/event0: EV_KEY       KEY_VOLUMEUP         DOWN\n"

NOT_A_PRESS = {
    "device_named_the_words": b'add device 7: /dev/input/event7\n  name:     "x" KEY_VOLUMEUP DOWN "y"\n',
    "device_named_the_words_bare": b"add device 7: /dev/input/event7\n  name:     KEY_VOLUMEUP DOWN\n",
    "device_named_an_event_line": (b'add device 7: /dev/input/event7\n  name:     "'
                                   b'/dev/input/event0: EV_KEY KEY_VOLUMEUP DOWN"\n'),
    "words_swapped": b"/dev/input/event0: EV_KEY       DOWN         KEY_VOLUMEUP\n",
    "another_event_type": b"/dev/input/event0: EV_SW        KEY_VOLUMEUP         DOWN\n",
    "another_key_then_words": b"/dev/input/event0: EV_KEY       KEY_VOLUMEDOWN       DOWN KEY_VOLUMEUP\n",
    "an_error_naming_them": b"could not open /dev/input/event9, KEY_VOLUMEUP DOWN\n",
    "released_not_pressed": b"/dev/input/event0: EV_KEY       KEY_VOLUMEUP         UP\n",
    "a_device_path_of_words": b"KEY_VOLUMEUP: EV_KEY       KEY_VOLUMEUP         DOWN x\n",
}


def stream_of(text: bytes, then: bytes = b"") -> Callable[[Any], Awaitable[None]]:
    async def stream(w: Any) -> None:
        w.write(text + then)
        await w.drain()
        await asyncio.sleep(30)  # held open: the watch ends by its deadline or by a press

    return stream


@pytest.mark.parametrize("name", sorted(NOT_A_PRESS))
async def test_a_line_that_is_no_key_event_is_never_a_press(fake_adb: Any, name: str) -> None:
    fake_adb.streams[GETEVENT_WATCH] = stream_of(NOT_A_PRESS[name])
    backend = AdbBackend(serial=fake_adb.serial, port=fake_adb.port)
    assert await backend.wait_for_key("KEY_VOLUMEUP", timeout=2) is False


@pytest.mark.parametrize("name", sorted(NOT_A_PRESS))
async def test_the_press_after_such_a_line_still_counts(fake_adb: Any, name: str) -> None:
    fake_adb.streams[GETEVENT_WATCH] = stream_of(NOT_A_PRESS[name], REAL_PRESS)
    backend = AdbBackend(serial=fake_adb.serial, port=fake_adb.port)
    assert await backend.wait_for_key("KEY_VOLUMEUP", timeout=20) is True


@pytest.mark.parametrize("line", [
    REAL_PRESS,
    b"EV_KEY       KEY_VOLUMEUP         DOWN\n",  # one device open: getevent leaves the path out
    b"/dev/input/event12: EV_KEY       KEY_VOLUMEUP         DOWN\r\n",  # adb's shell may end lines with CR
])
async def test_an_event_line_of_the_key_going_down_is_a_press(fake_adb: Any, line: bytes) -> None:
    announced = b'add device 1: /dev/input/event0\n  name:     "gpio-keys"\n'
    fake_adb.streams[GETEVENT_WATCH] = stream_of(announced, line)
    backend = AdbBackend(serial=fake_adb.serial, port=fake_adb.port)
    assert await backend.wait_for_key("KEY_VOLUMEUP", timeout=20) is True


def when_waiting(fake: Any, act: Callable[[], None]) -> threading.Thread:
    def run() -> None:
        for _ in range(2000):
            if fake.key_waiting:
                break
            time.sleep(0.01)
        act()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


async def test_a_device_named_a_line_break_and_a_key_event_is_never_a_press(fake_adb: Any) -> None:
    """A name may hold a line break: no check of the line could tell what follows from an event, so the watch
    asks getevent for events only (``-q``: no device announced). The stream ends after the device connects:
    what it printed was read by then, and it held no press."""
    hostile = b'x"\n/dev/input/event0: EV_KEY       KEY_VOLUMEUP         DOWN\n"'
    thread = when_waiting(fake_adb, lambda: fake_adb.connect_input_device(hostile, hang_up=True))
    backend = AdbBackend(serial=fake_adb.serial, port=fake_adb.port)
    assert await backend.wait_for_key("KEY_VOLUMEUP", timeout=30) is False
    thread.join(5)
    assert "shell:" + GETEVENT_WATCH in fake_adb.log


async def test_a_press_after_a_device_connects_still_counts(fake_adb: Any) -> None:
    def connect_then_press() -> None:
        fake_adb.connect_input_device(b"Keyboard K380")
        fake_adb.press_key()

    thread = when_waiting(fake_adb, connect_then_press)
    backend = AdbBackend(serial=fake_adb.serial, port=fake_adb.port)
    assert await backend.wait_for_key("KEY_VOLUMEUP", timeout=30) is True
    thread.join(5)
