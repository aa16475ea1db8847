"""TermuxBackend (optional): Sentinel running on the phone itself, inside Termux, with no adb.

It translates the device commands Sentinel builds into Termux:API programs run with subprocess
(argv, no shell): the UI dump and actions through ``termux-accessibility`` (needs the
TermuxAccessibilityService enabled; Unicode typing works through ACTION_SET_TEXT), and the Volume
Up confirmation is replaced by a ``termux-dialog confirm`` on the phone's own screen (an app cannot
read ``getevent`` without root). Commands it cannot translate are refused with a clear error,
never run through a shell. ``content``/``am`` go to the ``content``/``am`` binaries, which work
from Termux for some providers only.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Sequence

import anyio.to_thread

from .errors import DeviceCommandFailed, DeviceUnavailable
from .text_input import decode_input_text

Runner = Callable[[list[str], float], bytes]
GLOBAL_ACTIONS = {"KEYCODE_BACK": "BACK", "KEYCODE_HOME": "HOME", "KEYCODE_APP_SWITCH": "RECENTS"}


def run_subprocess(argv: list[str], timeout: float) -> bytes:
    try:
        done = subprocess.run(argv, capture_output=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise DeviceUnavailable(
            f"{argv[0]} not found: install Termux:API (`pkg install termux-api`)"
        ) from None
    except subprocess.TimeoutExpired:
        raise DeviceCommandFailed(f"{argv[0]} timed out after {timeout:g}s") from None
    return done.stdout + done.stderr


class TermuxBackend:
    name = "termux"
    unicode_text = True

    def __init__(self, runner: Runner = run_subprocess) -> None:
        self._run = runner

    def translate(self, argv: Sequence[str]) -> list[str]:
        a = [str(x) for x in argv]
        if a[:2] == ["uiautomator", "dump"]:
            return ["termux-accessibility", "dump"]
        if a[:2] == ["input", "tap"] and len(a) == 4:
            return ["termux-accessibility", "click", a[2], a[3]]
        if a[:2] == ["input", "swipe"] and len(a) == 7 and a[2:4] == a[4:6]:
            return [
                "termux-accessibility",
                "click",
                a[2],
                a[3],
                "0",
                a[6],
            ]  # a long press: click with a duration
        if a[:2] == ["input", "text"] and len(a) == 3:
            return ["termux-accessibility", "type", decode_input_text(a[2])]
        if a[:2] == ["input", "keyevent"] and len(a) == 3 and a[2] in GLOBAL_ACTIONS:
            return ["termux-accessibility", "global-action", GLOBAL_ACTIONS[a[2]]]
        if a == ["screencap", "-p"]:
            return ["termux-accessibility", "screenshot"]
        if a[:1] in (["content"], ["am"], ["getprop"], ["wm"]):
            return a
        raise DeviceCommandFailed(
            f"the termux backend cannot run {' '.join(a[:3])}…; use the adb backend for it"
        )

    async def exec_out(self, argv: Sequence[str], *, timeout: float = 20.0) -> bytes:
        real = self.translate(argv)
        out = await anyio.to_thread.run_sync(lambda: self._run(real, timeout))
        if real[:2] == ["termux-accessibility", "dump"] and out[:2] in (b"\xff\xfe", b"\xfe\xff"):
            out = out.decode("utf-16").encode()  # the accessibility dump is UTF-16
        return out

    async def shell(self, argv: Sequence[str], *, timeout: float = 20.0) -> str:
        return (await self.exec_out(argv, timeout=timeout)).decode("utf-8", errors="replace")

    async def wait_for_key(self, key: str, *, timeout: float) -> bool:
        argv = ["termux-dialog", "confirm", "-t", "Sentinel", "-i", "Allow the pending action?"]
        try:
            with anyio.fail_after(timeout):
                out = await anyio.to_thread.run_sync(lambda: self._run(argv, timeout), abandon_on_cancel=True)
        except TimeoutError:
            return False
        try:
            return json.loads(out.decode()).get("text") == "yes"
        except ValueError:
            return False

    async def describe(self) -> dict[str, str]:
        return {"backend": "termux", "serial": "local"}
