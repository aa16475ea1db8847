"""AdbBackend: a phone reached through an adb server (adbutils), device chosen by serial.

Commands are argv lists joined with ``shlex.join`` (the device's ``sh -c`` sees every argument
quoted). Binary output (screencap, the UI dump to /dev/tty) goes through the ``exec:`` service,
like ``adb exec-out``, so no file is written on the device and no sync protocol is needed.
"""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Sequence

import anyio
import anyio.from_thread
import anyio.to_thread

from .adb_deadline import Deadline, client_class
from .backend import Listening
from .commands import DUMP, MODEL
from .device_words import quoted
from .element_registry import MAX_DUMP_BYTES
from . import adb_request
from .errors import DeviceUnavailable

# What one command may print before the device is taken for hostile or broken: a UI dump of a busy screen is
# ~1 MB, a PNG screenshot of a large screen ~10 MB; a shell command's text (dumpsys, content query) far less.
SHELL_MAX_BYTES = 4_000_000
EXEC_MAX_BYTES = 32_000_000  # a screenshot: a 1440x3200 PNG of a busy screen is a few MB
# the UI dump has its own, smaller cap: the parser refuses a dump past MAX_DUMP_BYTES anyway, so reading on
# would only hold a worker thread and memory for output that is thrown away (slack: uiautomator's own line)
UI_DUMP_MAX_BYTES = MAX_DUMP_BYTES + 4096
GETEVENT_LINE_MAX = 4096  # one `getevent -l` line is ~80 bytes
# -q: no device is announced (getevent prints each it opens, and each added while it watches, by the name the
# device gives itself, which may hold a line break and then a line that reads as a key event); events only
GETEVENT_WATCH = "getevent -l -q"
HANDSHAKE_SLACK = 2.0  # seconds past a command's own deadline before its connections are shut
PROP_VALUE_MAX = 92  # Android's limit for a system property's value
# what adb serials are spelled with: USB (0123456789ABCDEF), emulator-5554, 192.168.1.20:5555,
# [fe80::1%wlan0]:5555, adb-XXXX-yyyy._adb-tls-connect._tcp (wireless debugging). The adb server names its
# devices, and a hostile one can put terminal escapes, direction overrides or any length into a serial, which
# device_info and every error would show
SERIAL = re.compile(r"[A-Za-z0-9._:%\[\]-]{1,128}")


def key_went_down(line: bytes, key: str) -> bool:
    """Whether a ``getevent -l`` line is the event of ``key`` going down: ``[/dev/input/eventN: ]EV_KEY <key>
    DOWN``, whole. getevent prints more than events: each input device it opens (and any added while it
    watches: a Bluetooth keyboard, gamepad, headset) with its name, whatever the device calls itself; a line
    holding the words anywhere let a device named ``x" KEY_VOLUMEUP DOWN "y`` say yes for the person."""
    return re.fullmatch(rb"(?:/dev/input/event[0-9]{1,4}: +)?EV_KEY +" + re.escape(key.encode("ascii"))
                        + rb" +DOWN *\r?", line) is not None


class AdbBackend:
    name = "adb"
    unicode_text = False  # `input text` is ASCII-only
    lists_windows = True

    def __init__(self, serial: str | None = None, host: str = "127.0.0.1", port: int = 5037, *,
                 serial_setting: str = "sentinel.device.serial") -> None:
        self.serial = serial
        self.serial_setting = serial_setting  # named in the error that asks to choose a device
        self.host = host
        self.port = port
        self._device = None

    # adbutils is synchronous: every call runs in a worker thread.
    def _server_reachable(self) -> None:
        # adbutils would spawn its bundled `adb start-server` on a refused connection; we report instead.
        try:
            with socket.create_connection((self.host, self.port), timeout=3):
                pass
        except OSError as exc:
            raise DeviceUnavailable(
                f"no adb server at {self.host}:{self.port} ({exc.strerror or exc}); start one with `adb "
                "start-server`"
            ) from None

    def _get_device(self):
        import adbutils

        if self._device is not None:
            return self._device
        if self.serial is not None and not SERIAL.fullmatch(self.serial):
            raise DeviceUnavailable(
                f"{self.serial_setting} {quoted(self.serial, 60)} is not spelled as an adb serial"
            )
        self._server_reachable()
        client = client_class()(host=self.host, port=self.port, socket_timeout=10)
        try:
            listed = [d.serial for d in client.device_list()]
        except adbutils.AdbError as exc:
            raise DeviceUnavailable(f"adb server at {self.host}:{self.port} failed: {quoted(exc)}") from None
        # only serials spelled as serials are ever shown or chosen; the others are counted, never quoted
        serials = [s for s in listed if SERIAL.fullmatch(s)]
        odd = len(listed) - len(serials)
        others = f"; and {odd} device(s) whose serial is not spelled as an adb serial" if odd else ""
        if self.serial is None:
            if not listed:
                raise DeviceUnavailable(
                    f"no device connected to the adb server at {self.host}:{self.port} (check `adb devices`)"
                )
            if len(listed) > 1:
                raise DeviceUnavailable(
                    f"several devices ({', '.join(serials) or 'none usable'}{others}): set "
                    f"{self.serial_setting} to the one to use"
                )
            if not serials:
                raise DeviceUnavailable(
                    f"the adb server at {self.host}:{self.port} names its only device with a serial that is "
                    "not spelled as an adb serial: refused"
                )
            self.serial = serials[0]
        elif self.serial not in serials:
            raise DeviceUnavailable(
                f"device {self.serial!r} is not connected (connected: {', '.join(serials) or 'none'}{others})"
            )
        self._device = client.device(self.serial)
        return self._device

    def _call(self, fn, seconds: float):
        """``fn(device)`` with every read of the call, the device list and handshakes included, cut at
        ``seconds`` (and a little: the command's own deadline, when it has one, says so first)."""
        import adbutils

        deadline = Deadline(seconds + HANDSHAKE_SLACK)
        try:
            with deadline:
                return fn(self._get_device())
        except (adbutils.AdbError, OSError, DeviceUnavailable) as exc:
            self._device = None  # re-resolve next time: the device may have gone away
            if deadline.expired:  # its sockets were shut: whatever was then raised says only that
                raise DeviceUnavailable(
                    f"the adb server or device {self.serial or '?'} did not answer in time"
                ) from None
            if isinstance(exc, DeviceUnavailable):
                raise
            if isinstance(exc, adbutils.AdbError) or not isinstance(exc, OSError):
                raise DeviceUnavailable(
                    f"device {self.serial or '?'}: the adb server or the device refused it: {quoted(exc)}"
                ) from None
            raise DeviceUnavailable(f"lost the connection to device {self.serial or '?'}: {exc}") from None

    def check_sendable(self, argv: Sequence[str]) -> None:
        adb_request.check_sendable(argv)  # adb_request.py: a request's length is four hex digits on the wire

    async def shell(self, argv: Sequence[str], *, timeout: float = 20.0) -> str:
        out = await self._read_service(adb_request.service("shell", argv), timeout, SHELL_MAX_BYTES)
        return out.decode("utf-8", errors="replace").rstrip()  # what adbutils' shell() returns

    async def exec_out(self, argv: Sequence[str], *, timeout: float = 20.0) -> bytes:
        limit = UI_DUMP_MAX_BYTES if [str(a) for a in argv] == DUMP else EXEC_MAX_BYTES
        return await self._read_service(adb_request.service("exec", argv), timeout, limit)

    async def _read_service(self, service: str, timeout: float, limit: int) -> bytes:
        """A device service's whole output, within ``timeout`` in all and ``limit`` bytes: adbutils' own reads
        time out per ``recv`` only and keep whatever arrives, so a device trickling or flooding output would
        hold a worker thread and memory without end."""
        command = service.split(":", 1)[1]
        adb_request.check_fits(service)

        def run(d) -> bytes:
            conn = d.open_transport(timeout=timeout)
            try:
                conn.send_command(service)
                conn.check_okay()
                return _read_until_close(conn.conn, time.monotonic() + timeout, limit, command)
            finally:
                conn.close()

        return await anyio.to_thread.run_sync(lambda: self._call(run, timeout), abandon_on_cancel=True)

    async def wait_for_key(self, key: str, *, timeout: float, question: str = "",
                           listening: Listening | None = None) -> bool:
        """Stream ``getevent -l -q`` until ``<key> DOWN`` or the deadline (a timeout denies); the phone shows
        nothing (``question`` is the caller's, shown in its client). ``listening`` is awaited once the stream
        is open (getevent reports only what happens after it opens the input devices: a press made before this
        question's turn, for another question, was never on this stream)."""

        def run(d) -> bool:
            deadline = time.monotonic() + timeout
            conn = d.shell(GETEVENT_WATCH, stream=True)
            try:
                if listening is not None:
                    anyio.from_thread.run(listening)
                buffer = b""
                while (left := deadline - time.monotonic()) > 0:
                    conn.conn.settimeout(min(left, 0.5))
                    try:
                        chunk = conn.conn.recv(4096)
                    except TimeoutError:
                        continue
                    if not chunk:
                        return False  # getevent ended (device gone): never a yes
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    if len(buffer) > GETEVENT_LINE_MAX:
                        return False  # not getevent's output: never a yes
                    if any(key_went_down(line, key) for line in lines):
                        return True
                return False
            finally:
                conn.close()

        return await anyio.to_thread.run_sync(lambda: self._call(run, timeout), abandon_on_cancel=True)

    async def describe(self) -> dict[str, str]:
        # getprop answers one line (a value is at most 92 bytes): more is not a model name, and must not add
        # lines of its own to device_info ("physical_confirmation: True")
        lines = (await self.shell(MODEL)).strip().splitlines()
        model = lines[0].strip()[:PROP_VALUE_MAX] if lines else ""
        if not model.isprintable():  # escapes, NULs, direction overrides, invisible characters: escaped
            model = repr(model)
        return {
            "backend": "adb",
            "serial": self.serial or "",
            "model": model,
            "adb": f"{self.host}:{self.port}",
        }


def _read_until_close(sock: socket.socket, deadline: float, limit: int, command: str) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise DeviceUnavailable(f"the device did not finish {command!r} in time")
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            raise DeviceUnavailable(f"the device did not finish {command!r} in time") from None
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise DeviceUnavailable(f"the device's output of {command!r} passed {limit:,} bytes; refused")
        chunks.append(chunk)

