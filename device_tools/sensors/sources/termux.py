"""Sensors read inside Termux through the termux-api commands (JSON on stdout).

``termux-sensor`` is always run with ``-n 1``; if it is killed on timeout, ``termux-sensor -c`` releases
the listener so none is ever left running on the phone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable, Sequence
from typing import Any

from device_tools.sensors.errors import (
    MalformedOutput,
    SensorError,
    SensorUnsupported,
    SourceMissing,
    SourceUnavailable,
)
from sentinel_mcp.core.sensor_kinds import SensorKind
from sentinel_mcp.core.trusted_code import ProgramRefused, find_program
from device_tools.sensors.parsers.termux_json import (
    parse_termux_battery,
    parse_termux_location,
    parse_termux_sensor_list,
    parse_termux_sensor_sample,
    parse_termux_wifi_scan,
)
from device_tools.sensors.read_slots import ReadSlots
from device_tools.sensors.reading import Reading
from device_tools.sensors.sources.adb import values_from_event
from device_tools.sensors.sources.termux_media import record_audio, take_photo
from device_tools.sensors.termux_names import KIND_WORDS, names_by_kind

log = logging.getLogger(__name__)

STDOUT_MAX_BYTES = 512_000  # the largest JSON a termux-api command prints is a Wi-Fi scan of a few KB
STDERR_MAX_BYTES = 64_000


class _Oversize(SensorError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"output passed {limit} bytes")
        self.limit = limit


async def _bounded(stream: asyncio.StreamReader, limit: int) -> bytes:
    """All of ``stream``, read in chunks; _Oversize as soon as it passes ``limit`` bytes."""
    chunks, size = [], 0
    while chunk := await stream.read(65_536):
        size += len(chunk)
        if size > limit:
            raise _Oversize(limit)
        chunks.append(chunk)
    return b"".join(chunks)


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # the wrapper script and the termux-api child it spawned
    # asyncio reports the exit only once both pipes reach EOF: drain them, keeping nothing. Bounded, in case
    # a child left the group and holds a pipe open
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(_discard(proc.stdout), _discard(proc.stderr), proc.wait()), 5)


async def _stop(reads: Sequence[asyncio.Future[bytes]]) -> None:
    for read in reads:
        read.cancel()
    await asyncio.gather(*reads, return_exceptions=True)


async def _discard(stream: asyncio.StreamReader | None) -> None:
    while stream is not None and await stream.read(65_536):
        pass


class TermuxSource:
    name = "termux"

    def __init__(self, bin_dir: str | None = None, timeout: float = 15.0,
                 clock: Callable[[], float] = time.time) -> None:
        self._bin_dir, self._timeout, self._clock = bin_dir, timeout, clock
        self._sensor_names: dict[SensorKind, str] | None = None
        self.record_seconds = 3  # microphone clip length
        self._reads = ReadSlots("termux")

    async def close(self) -> None:
        return None

    def _which(self, command: str) -> str:
        # looked up (and judged) before every run: a program another account could change, or one in a
        # folder it may write, would run code as Sentinel's user (core/trusted_code.py)
        try:
            path = find_program(command, self._bin_dir)
        except ProgramRefused as e:
            log.error("%s", e)  # the operator's to fix: said where it is read
            raise SourceUnavailable(f"{command} not run: {e}") from None
        if path is None:
            where = self._bin_dir or os.environ.get("PATH", "")
            raise SourceMissing(f"{command} not found (in {where}); install Termux:API and "
                                    "`pkg install termux-api`")
        return path

    async def _run(self, command: str, *args: str) -> str:
        exe = self._which(command)
        proc = await asyncio.create_subprocess_exec(
            exe,
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )  # so a timeout or an oversize output kills the whole group
        assert proc.stdout is not None and proc.stderr is not None
        reads = [asyncio.ensure_future(_bounded(proc.stdout, STDOUT_MAX_BYTES)),
                 asyncio.ensure_future(_bounded(proc.stderr, STDERR_MAX_BYTES))]
        try:
            async with asyncio.timeout(self._timeout):
                out, _ = await asyncio.gather(*reads)
                code = await proc.wait()
        except TimeoutError:
            await _stop(reads)
            await _kill_group(proc)
            if command == "termux-sensor":
                await self._release_listeners()
            raise SourceUnavailable(
                f"{command} {' '.join(args)}: no answer within {self._timeout:g} s "
                "(is the Termux:API app installed and allowed?)"
            ) from None
        except _Oversize as e:
            await _stop(reads)
            await _kill_group(proc)
            if command == "termux-sensor":
                await self._release_listeners()
            raise MalformedOutput(f"{command}: output passed {e.limit} bytes (killed)") from None
        except asyncio.CancelledError:  # the read was abandoned: leave nothing running on the phone
            await _stop(reads)
            await _kill_group(proc)
            raise
        if code != 0:
            # stdout is the reading and stderr may quote it: neither goes into the error
            raise SourceUnavailable(f"{command} exited with {code} ({len(out)} bytes of output)")
        return out.decode("utf-8", "replace")

    async def _release_listeners(self) -> None:
        try:
            exe = self._which("termux-sensor")
            proc = await asyncio.create_subprocess_exec(
                exe, "-c", stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL, start_new_session=True,
            )  # a group of its own, so a release that hangs as the read did is killed, not left running
        except (OSError, SourceUnavailable):
            return  # best effort: the listener dies with the Termux:API service anyway
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except TimeoutError:
            await _kill_group(proc)
        except asyncio.CancelledError:
            await _kill_group(proc)
            raise

    async def _names(self) -> dict[SensorKind, str]:
        if self._sensor_names is None:
            # one sensor's name per kind, or none (termux_names.py)
            listed = parse_termux_sensor_list(await self._run("termux-sensor", "-l"))
            self._sensor_names = names_by_kind(listed)
        return self._sensor_names

    async def available(self) -> set[SensorKind]:
        kinds: set[SensorKind] = set()
        for kind, command in (
            (SensorKind.location, "termux-location"),
            (SensorKind.battery, "termux-battery-status"),
            (SensorKind.nearby_devices, "termux-wifi-scaninfo"),
            (SensorKind.camera, "termux-camera-photo"),
            (SensorKind.microphone, "termux-microphone-record"),
        ):
            try:
                self._which(command)
                kinds.add(kind)
            except SourceUnavailable:
                pass
        try:
            kinds |= set(await self._names())
        except SourceUnavailable:
            if not kinds:
                raise
        return kinds

    async def read(self, sensor: SensorKind) -> Reading:
        # a bounded number of reads at once: each may hold up to the byte caps (a photo, a clip) in memory
        async with self._reads.hold():
            return await self._read(sensor)

    async def _read(self, sensor: SensorKind) -> Reading:
        values: dict[str, Any]
        if sensor is SensorKind.location:
            values = parse_termux_location(await self._run("termux-location", "-p", "gps", "-r", "once"))
        elif sensor is SensorKind.battery:
            values = parse_termux_battery(await self._run("termux-battery-status"))
        elif sensor is SensorKind.nearby_devices:  # Wi-Fi access points in range
            values = parse_termux_wifi_scan(await self._run("termux-wifi-scaninfo"))
        elif sensor is SensorKind.camera:
            values = await take_photo(self._run)
        elif sensor is SensorKind.microphone:
            values = await record_audio(self._run, self.record_seconds)
        elif sensor in KIND_WORDS:
            name = (await self._names()).get(sensor)
            if name is None:
                raise SensorUnsupported(f"this phone reports no sensor for {sensor.value}")
            out = await self._run("termux-sensor", "-s", name, "-n", "1")
            values = values_from_event(sensor, parse_termux_sensor_sample(out, name)) | {"hardware": name}
        else:
            raise SensorUnsupported(f"{sensor.value} cannot be read through Termux")
        return Reading(sensor=sensor, values=values, taken_at=self._clock(), source=self.name)
