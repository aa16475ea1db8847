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

import contextlib
import json
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Sequence

import anyio.to_thread

from .backend import Listening
from .element_registry import MAX_DUMP_BYTES
from .errors import CommandTooLong, DeviceCommandFailed, DeviceUnavailable
from .text_input import decode_input_text

Runner = Callable[[list[str], float], bytes]
GLOBAL_ACTIONS = {"KEYCODE_BACK": "BACK", "KEYCODE_HOME": "HOME", "KEYCODE_APP_SWITCH": "RECENTS"}


# What one command may print, as the adb backend bounds it: the accessibility dump is the screen's (any app's
# words, UTF-16: twice the parser's cap), a screenshot a few MB; past it the command is killed, not read on
OUTPUT_MAX_BYTES = 32_000_000
DUMP_MAX_BYTES = 2 * MAX_DUMP_BYTES + 8192
MAX_ARG_BYTES = 131_072  # Linux's MAX_ARG_STRLEN, with the NUL: a longer argument fails with E2BIG


def run_subprocess(argv: list[str], timeout: float) -> bytes:
    """The command's output (stdout and stderr), within ``timeout`` in all and its byte cap: its process group
    is killed past either, so a command that floods or never ends holds neither memory nor a thread."""
    # the parser refuses a larger dump: reading on would be waste
    limit = DUMP_MAX_BYTES if argv[:2] == ["termux-accessibility", "dump"] else OUTPUT_MAX_BYTES
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
    except FileNotFoundError:
        raise DeviceUnavailable(
            f"{argv[0]} not found: install Termux:API (`pkg install termux-api`)"
        ) from None
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    size = 0
    try:
        with selectors.DefaultSelector() as ready:
            ready.register(proc.stdout, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise DeviceCommandFailed(f"{argv[0]} timed out after {timeout:g}s")
                if not ready.select(left):
                    continue
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                size += len(chunk)
                if size > limit:
                    raise DeviceCommandFailed(f"{argv[0]} printed more than {limit:,} bytes; refused")
                chunks.append(chunk)
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise DeviceCommandFailed(f"{argv[0]} timed out after {timeout:g}s") from None
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        proc.stdout.close()
    return b"".join(chunks)


class TermuxBackend:
    name = "termux"
    unicode_text = True
    lists_windows = False  # an app has no DUMP permission: other apps' windows are not seen (docs say so)

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

    def check_sendable(self, argv: Sequence[str]) -> None:
        """A command this backend cannot run, or an argument longer than Linux passes to a program."""
        for arg in self.translate(argv):
            if len(arg.encode("utf-8", "surrogatepass")) >= MAX_ARG_BYTES:
                raise CommandTooLong(
                    "an argument is too long for a program on the phone "
                    f"(at most {MAX_ARG_BYTES - 1:,} bytes): nothing was sent"
                )

    async def exec_out(self, argv: Sequence[str], *, timeout: float = 20.0) -> bytes:
        real = self.translate(argv)
        out = await anyio.to_thread.run_sync(lambda: self._run(real, timeout))
        if real[:2] == ["termux-accessibility", "dump"] and out[:2] in (b"\xff\xfe", b"\xfe\xff"):
            # the accessibility dump is UTF-16, and a label is any Java string: a lone surrogate (half a
            # character) is read as U+FFFD, as the adb path reads a bad byte, never an error for the screen
            out = out.decode("utf-16", errors="replace").encode()
        return out

    async def shell(self, argv: Sequence[str], *, timeout: float = 20.0) -> str:
        return (await self.exec_out(argv, timeout=timeout)).decode("utf-8", errors="replace")

    async def wait_for_key(self, key: str, *, timeout: float, question: str = "",
                           listening: Listening | None = None) -> bool:
        # the dialog is all the person sees on the phone: it shows what the yes allows
        argv = ["termux-dialog", "confirm", "-t", "Sentinel", "-i", question or "Allow the pending action?"]
        if listening is not None:
            await listening()  # the dialog answers only this question: it goes up right after
        try:
            with anyio.fail_after(timeout):
                out = await anyio.to_thread.run_sync(lambda: self._run(argv, timeout), abandon_on_cancel=True)
        except TimeoutError:
            return False
        try:
            answer = json.loads(out.decode())
        except (ValueError, RecursionError):  # not JSON, or nested past the parser: not a yes
            return False
        return isinstance(answer, dict) and answer.get("text") == "yes"  # anything else is no

    async def describe(self) -> dict[str, str]:
        return {"backend": "termux", "serial": "local"}
