"""The one interface every device backend implements (adb, simulated, Termux).

Everything that reaches a device is an argv list. Backends decide how to carry it (adb shell
string quoted with shlex, a subprocess, an in-memory interpreter), never what to run: commands
are built in ``commands.py`` and pass through ``gate.CommandGate`` first.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Protocol, runtime_checkable

# awaited once the phone listens for a key press: where the prompt for it is shown (``wait_for_key``)
Listening = Callable[[], Coroutine[Any, Any, None]]


@runtime_checkable
class DeviceBackend(Protocol):
    """A phone, as Sentinel sees it."""

    name: str  # "adb", "simulated", "termux"
    unicode_text: bool  # True when ``type_text`` can carry non-ASCII (an IME / accessibility path)
    # True when ``dumpsys window windows`` lists the phone's windows (adb's shell may; an app cannot)
    lists_windows: bool

    async def shell(self, argv: Sequence[str], *, timeout: float = 20.0) -> str:
        """Run one command on the device and return its text output (stdout+stderr)."""
        ...

    def check_sendable(self, argv: Sequence[str]) -> None:
        """Raise (``DeviceError``: ``CommandTooLong``, ``DeviceCommandFailed``) if ``argv`` could never be
        sent as it is: called before the user is asked to confirm it, so no one confirms what cannot be
        done."""
        ...

    async def exec_out(self, argv: Sequence[str], *, timeout: float = 20.0) -> bytes:
        """Run one command and return its raw bytes (screencap, uiautomator dump to /dev/tty)."""
        ...

    async def wait_for_key(self, key: str, *, timeout: float, question: str = "",
                           listening: Listening | None = None) -> bool:
        """Wait until the physical ``key`` (e.g. ``KEY_VOLUMEUP``) is pressed; False on timeout. ``question``:
        what the press allows, for a backend that can show it on the phone (Termux's dialog). ``listening``
        is awaited once the phone listens for the press (the prompt goes out then, never earlier: a press the
        moment it is read is caught, and a press made before this question's turn is not on the stream)."""
        ...

    async def describe(self) -> dict[str, str]:
        """Which device this is (serial, model, ...), for results and the audit log."""
        ...
