"""A fake adb *server* (the host-side protocol adbutils speaks on tcp/5037), answering ``shell:`` commands
with recorded phone output. A phone cannot exist in CI; everything above the socket is the real adbutils.

Adapted from shared/notes/android/fake_adb.py (kept separately here; the device tests have their own).
"""

from __future__ import annotations

import asyncio
import threading


def _block(s: bytes) -> bytes:
    return b"%04x" % len(s) + s


class FakeAdbServer:
    def __init__(self, canned: dict[str, str], serials: tuple[str, ...] = ("fake-serial",)) -> None:
        self.canned = dict(canned)
        self.serials = serials
        self.log: list[str] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None

    async def _handle(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        try:
            n = int((await r.readexactly(4)).decode(), 16)
            cmd = (await r.readexactly(n)).decode()
            self.log.append(cmd)
            if cmd == "host:version":
                w.write(b"OKAY" + _block(b"0029"))
            elif cmd in ("host:devices", "host:devices-l"):
                w.write(b"OKAY" + _block("".join(f"{s}\tdevice\n" for s in self.serials).encode()))
            elif cmd.startswith("host-serial:") and cmd.endswith(":features"):
                w.write(b"OKAY" + _block(b"cmd,stat_v2"))  # no shell_v2: adbutils uses plain shell:
            elif cmd.startswith(("host:tport:serial:", "host:transport:")):
                serial = cmd.rsplit(":", 1)[-1]
                if serial not in self.serials:
                    w.write(b"FAIL" + _block(f"device '{serial}' not found".encode()))
                else:
                    w.write(b"OKAY" + (b"\0" * 8 if "tport" in cmd else b""))
                    n = int((await r.readexactly(4)).decode(), 16)
                    sub = (await r.readexactly(n)).decode()
                    self.log.append(sub)
                    if sub.startswith("shell:"):
                        out = self.canned.get(sub[6:], f"/system/bin/sh: {sub[6:].split()[0]}: not found\n")
                        w.write(b"OKAY" + out.encode())
                    else:
                        w.write(b"FAIL" + _block(b"unsupported"))
            else:
                w.write(b"FAIL" + _block(f"unknown {cmd}".encode()))
            await w.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            w.close()

    def start(self) -> FakeAdbServer:
        ready = threading.Event()

        async def main() -> None:
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            async with self._server:
                try:
                    await self._server.serve_forever()
                except asyncio.CancelledError:
                    pass

        self._thread = threading.Thread(target=lambda: self._loop.run_until_complete(main()), daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._loop.call_soon_threadsafe(self._server.close)
        if self._thread is not None:
            self._thread.join(5)

    def shell_commands(self) -> list[str]:
        return [c[6:] for c in self.log if c.startswith("shell:")]
