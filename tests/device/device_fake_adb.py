"""A fake adb *server* (the host side, tcp protocol adbutils speaks) backed by a SimulatedDevice.

Started from ../shared/notes/android/fake_adb.py. It answers host:version/devices/features,
host:tport:serial and host:transport, then ``shell:`` and ``exec:`` services, splitting the command
with shlex exactly as the device's ``sh -c`` would, and records every service string it receives.
``getevent -l`` streams (``-q`` or not): it stays open and emits a KEY_VOLUMEUP DOWN line when ``press_key``
is called; ``connect_input_device`` announces a new input device by its name, as getevent does unless ``-q``.
Scripted overrides (``script``) answer a command with canned output first, e.g. dump failures;
``streams`` hands a command's connection to a coroutine that writes what it likes (a hostile device's flood or
trickle).
"""

from __future__ import annotations

import asyncio
import shlex
import threading
from collections import defaultdict, deque
from typing import Awaitable, Callable

from device_tools.simulated import SimulatedDevice


GETEVENT = ("getevent -l", "getevent -l -q")  # the key watch, as the backend runs it (and as it did)


def _block(data: bytes) -> bytes:
    return b"%04x" % len(data) + data


class FakeAdbServer:
    def __init__(self, serial: str = "fake-serial", device: SimulatedDevice | None = None) -> None:
        self.serial = serial
        self.device = device or SimulatedDevice()
        self.log: list[str] = []  # every request, host and device services
        self.script: dict[str, deque[bytes]] = defaultdict(deque)
        self.streams: dict[str, Callable[[asyncio.StreamWriter], Awaitable[None]]] = {}
        self.refusals: dict[str, bytes] = {}  # a command the device refuses to open, with its FAIL message
        self.online = True
        self.extra_serials: list[str] = []  # other devices `host:devices` lists (never reachable)
        # a host request ("host:devices") or a device command answered wholly by a coroutine, status word and
        # all: a hostile server's trickled status, device list or FAIL reason
        self.raw: dict[str, Callable[[asyncio.StreamWriter], Awaitable[None]]] = {}
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._key_waiters: list[asyncio.StreamWriter] = []
        self._announced_to: set[asyncio.StreamWriter] = set()  # getevent streams without -q
        self._devices = 1
        self.most_key_waiters = 0  # the most `getevent -l` streams open at once
        self._ready = threading.Event()
        self._server: asyncio.base_events.Server | None = None

    # ---- control ------------------------------------------------------------------
    def start(self) -> FakeAdbServer:
        threading.Thread(target=self._thread, daemon=True).start()
        self._ready.wait(5)
        return self

    def stop(self) -> None:
        async def close() -> None:
            for w in self._key_waiters:
                w.close()
            if self._server is not None:
                self._server.close()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)

    def device_commands(self) -> list[str]:
        """The shell commands the device received (service prefix stripped)."""
        return [s.split(":", 1)[1] for s in self.log if s.startswith(("shell:", "exec:"))]

    def press_key(self, line: bytes = b"/dev/input/event0: EV_KEY       KEY_VOLUMEUP         DOWN\n") -> None:
        def emit() -> None:
            for w in self._key_waiters:
                w.write(b"/dev/input/event0: EV_SYN       SYN_REPORT           00000000\n" + line)

        self._loop.call_soon_threadsafe(emit)

    def connect_input_device(self, name: bytes, *, hang_up: bool = False) -> None:
        """An input device appears (a Bluetooth keyboard, gamepad, headset): getevent without ``-q`` prints it
        with the name the device gives itself, as it is. ``hang_up``: the streams end right after (a watch
        that read no press by then says no at once)."""

        def emit() -> None:
            self._devices += 1
            for w in list(self._key_waiters):
                if w in self._announced_to:
                    w.write(b"add device %d: /dev/input/event%d\n  name:     \"%s\"\n"
                            % (self._devices, self._devices, name))
                if hang_up:
                    w.close()

        self._loop.call_soon_threadsafe(emit)

    @property
    def key_waiting(self) -> bool:
        return bool(self._key_waiters)

    @property
    def key_waiters(self) -> int:
        return len(self._key_waiters)

    # ---- server -------------------------------------------------------------------
    def _thread(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def main() -> None:
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()

        self._loop.run_until_complete(main())
        self._loop.run_forever()

    async def _read_request(self, r: asyncio.StreamReader) -> str:
        n = int((await r.readexactly(4)).decode(), 16)
        return (await r.readexactly(n)).decode()

    async def _handle(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        try:
            cmd = await self._read_request(r)
            self.log.append(cmd)
            if cmd in self.raw:
                await self.raw[cmd](w)
            elif cmd == "host:version":
                w.write(b"OKAY" + _block(b"0029"))
            elif cmd in ("host:devices", "host:devices-l"):
                listed = [self.serial, *self.extra_serials] if self.online else []
                w.write(b"OKAY" + _block("".join(f"{s}\tdevice\n" for s in listed).encode()))
            elif cmd.startswith("host-serial:") and cmd.endswith(":features"):
                w.write(b"OKAY" + _block(b"cmd,stat_v2"))  # no shell_v2: adbutils uses plain shell:
            elif cmd.startswith(("host:tport:serial:", "host:transport:")):
                # the serial is the rest of the request: it may hold ':' itself (192.168.1.20:5555)
                wanted = cmd.removeprefix("host:tport:serial:").removeprefix("host:transport:")
                if wanted != self.serial or not self.online:
                    w.write(b"FAIL" + _block(f"device '{wanted}' not found".encode()))
                else:
                    w.write(b"OKAY" + (b"\0" * 8 if "tport" in cmd else b""))
                    await self._service(await self._read_request(r), r, w)
                    return
            else:
                w.write(b"FAIL" + _block(f"unknown host service {cmd}".encode()))
            await w.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            if w not in self._key_waiters:
                w.close()

    async def _service(self, sub: str, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        self.log.append(sub)
        kind, _, command = sub.partition(":")
        if command in self.raw:
            try:
                await self.raw[command](w)
            except ConnectionError:
                pass
            finally:
                w.close()
            return
        if kind not in ("shell", "exec"):
            w.write(b"FAIL" + _block(b"unsupported service"))
            await w.drain()
            w.close()
            return
        if command in self.refusals:
            w.write(b"FAIL" + _block(self.refusals[command]))
            await w.drain()
            w.close()
            return
        if command in GETEVENT and command not in self.streams:
            # listening before the shell reads as open: the OKAY went out first and, with this thread behind
            # the client's under load, a prompt shown on it could come before the press was listened for
            self._key_waiters.append(w)
            if "-q" not in command.split():
                self._announced_to.add(w)
            self.most_key_waiters = max(self.most_key_waiters, len(self._key_waiters))
        w.write(b"OKAY")
        if command in self.streams:
            try:
                await self.streams[command](w)
            except ConnectionError:
                pass  # the client hung up on it
            finally:
                w.close()
            return
        if command in GETEVENT:
            try:
                await w.drain()
                await r.read()  # until the client closes the stream
            finally:
                self._key_waiters.remove(w)
                self._announced_to.discard(w)
                w.close()
            return
        if self.script[command]:
            out = self.script[command].popleft()
        else:
            out = self.device._run(shlex.split(command))
        w.write(out)
        await w.drain()
        w.close()
