"""Hostile termux-api output costs a bounded amount of memory: stdout and stderr are read in chunks under a
byte cap (the command's process group is killed past it), a photo's pixel count is checked from its header
before anything is decoded, a recording is read no further than its cap, and only a few reads run at once."""

from __future__ import annotations

import asyncio
import shlex
import struct
import sys
import zlib
from pathlib import Path

import pytest
from PIL import Image
from tests.sensors.test_termux_source import calls, script

from device_tools.sensors.errors import MalformedOutput, SourceUnavailable
from device_tools.sensors.sources import termux_media
from device_tools.sensors.sources.termux import STDOUT_MAX_BYTES, TermuxSource
from sentinel_mcp.core.sensor_kinds import SensorKind

pytestmark = pytest.mark.timeout(60)
PY = shlex.quote(sys.executable)


@pytest.mark.parametrize("body", [
    "yes '{\"latitude\": 1.0,'",  # an endless stream: would fill memory for the whole timeout
    f"head -c {STDOUT_MAX_BYTES + 1} /dev/zero",  # just past the cap, then exits 0
    f"{PY} -c 'import sys; sys.stdout.write(\"[\" * {STDOUT_MAX_BYTES * 2})'",
    "yes error >&2",  # stderr is bounded too
])
async def test_oversize_output_is_refused_and_the_command_killed(body, tmp_path: Path):
    b = tmp_path / "bin"
    b.mkdir()
    pid_file = tmp_path / "pid"
    script(b, "termux-location", f"echo $$ > {shlex.quote(str(pid_file))}\n{body}")
    src = TermuxSource(str(b), timeout=30)
    with pytest.raises(MalformedOutput, match="output passed"):
        await src.read(SensorKind.location)
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()


def _png_header(width: int, height: int) -> bytes:
    """A tiny PNG that declares ``width`` x ``height`` pixels (its data would inflate to the full image)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + chunk(
        b"IEND", b"")


def _jpeg_claiming(width: int, height: int) -> bytes:
    """A small real JPEG whose frame header is rewritten to claim ``width`` x ``height``."""
    import io
    buf = io.BytesIO()
    Image.new("RGB", (16, 16)).save(buf, format="JPEG")
    data = bytearray(buf.getvalue())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", height, width)
    return bytes(data)


@pytest.mark.parametrize("image", [
    _png_header(12_000, 12_000),  # 144 MP from ~1 KB: the red team's +699 MB
    _png_header(5_000, 5_000),  # 25 MP: under the header cap, over what a PNG may decode to
    _png_header(1, 60_000_000),  # a strip
    _jpeg_claiming(60_000, 60_000),  # 3.6 GP declared by a JPEG frame header
])
async def test_a_photo_bomb_is_refused_before_decoding(image, tmp_path: Path, monkeypatch):
    b = tmp_path / "bin"
    b.mkdir()
    bomb = tmp_path / "bomb.img"
    bomb.write_bytes(image)
    script(b, "termux-camera-photo", f'for last; do :; done\ncp {shlex.quote(str(bomb))} "$last"')

    def no_decoding(self):  # any decode of these would allocate hundreds of MB
        raise AssertionError("decoded")

    monkeypatch.setattr(Image.Image, "load", no_decoding)
    with pytest.raises(MalformedOutput, match="px|pixels|readable"):
        await TermuxSource(str(b), timeout=30).read(SensorKind.camera)


@pytest.mark.parametrize("size", [termux_media.AUDIO_MAX_BYTES + 1, 3 * termux_media.AUDIO_MAX_BYTES])
async def test_an_oversize_recording_is_not_read_whole(size, tmp_path: Path, monkeypatch):
    b = tmp_path / "bin"
    b.mkdir()
    script(b, "termux-microphone-record", f"""case "$1" in
  -f) head -c {size} /dev/zero > "$2"; echo "Recording started" ;;
  -q) echo "Recording finished" ;;
esac""")

    def read_whole(self):
        raise AssertionError("read_bytes reads the whole clip")

    monkeypatch.setattr(Path, "read_bytes", read_whole)
    src = TermuxSource(str(b), timeout=30)
    src.record_seconds = 0
    with pytest.raises(MalformedOutput, match="larger than"):
        await src.read(SensorKind.microphone)
    assert calls(b)[-1] == "termux-microphone-record -q"


async def test_only_a_few_reads_run_at_once(tmp_path: Path):
    b = tmp_path / "bin"
    b.mkdir()
    gate = tmp_path / "go"
    script(b, "termux-battery-status", f"while [ ! -e {shlex.quote(str(gate))} ]; do sleep 0.05; done\n"
           'echo \'{"percentage": 50, "status": "FULL"}\'')
    src = TermuxSource(str(b), timeout=30)
    from device_tools.sensors.read_slots import MAX_CONCURRENT_READS

    running = [asyncio.create_task(src.read(SensorKind.battery)) for _ in range(MAX_CONCURRENT_READS)]
    while len(calls(b)) < MAX_CONCURRENT_READS:
        await asyncio.sleep(0.05)
    with pytest.raises(SourceUnavailable, match="reads already running"):
        await src.read(SensorKind.battery)
    gate.touch()
    assert all(r.values["percentage"] == 50.0 for r in await asyncio.gather(*running))
    assert (await src.read(SensorKind.battery)).values["percentage"] == 50.0  # free again


async def test_adb_reads_are_capped_too():
    """The adb source holds the same cap (its gate is a stand-in here that answers when the test says so)."""
    from device_tools.sensors.read_slots import MAX_CONCURRENT_READS
    from device_tools.sensors.sources.adb import AdbSource

    class SlowGate:
        serial = "slow"

        def __init__(self) -> None:
            self.go, self.waiting = asyncio.Event(), 0

        async def read(self, argv, *, timeout):
            self.waiting += 1
            await self.go.wait()
            return "Current Battery Service state:\n  level: 50\n  scale: 100\n"

    gate = SlowGate()
    src = AdbSource(gate=gate)  # type: ignore[arg-type]
    running = [asyncio.create_task(src.read(SensorKind.battery)) for _ in range(MAX_CONCURRENT_READS)]
    while gate.waiting < MAX_CONCURRENT_READS:
        await asyncio.sleep(0.01)
    with pytest.raises(SourceUnavailable, match="reads already running"):
        await src.read(SensorKind.battery)
    gate.go.set()
    assert all(r.values["percentage"] == 50.0 for r in await asyncio.gather(*running))



NESTED = "[" * 200_000  # 200 KB, under the byte cap: Python's JSON decoder recurses once per bracket
HUGE_INT = "1" * 5_000  # past Python's 4,300-digit limit for int(): a ValueError, not a JSONDecodeError


def termux_printing(tmp_path: Path, command: str, body: str) -> TermuxSource:
    b = tmp_path / "bin"
    b.mkdir()
    (tmp_path / "out.json").write_text(body)
    for name in ("termux-sensor", "termux-location", "termux-battery-status", "termux-wifi-scaninfo"):
        script(b, name, f"cat {shlex.quote(str(tmp_path / 'out.json'))}" if name == command else "echo '{}'")
    return TermuxSource(str(b), timeout=30)


@pytest.mark.parametrize("command, body, kind", [
    ("termux-sensor", '{"sensors": ' + NESTED, SensorKind.motion),
    ("termux-location", NESTED, SensorKind.location),
    ("termux-battery-status", '{"percentage": ' + HUGE_INT + "}", SensorKind.battery),
    ("termux-wifi-scaninfo", NESTED, SensorKind.nearby_devices),
])
async def test_deep_or_huge_json_is_malformed_output(command, body, kind, tmp_path: Path):
    with pytest.raises(MalformedOutput, match="not JSON"):
        await termux_printing(tmp_path, command, body).read(kind)


async def test_the_sensor_list_answers_when_the_sensor_list_is_deep_json(tmp_path: Path, make_bridge):
    bridge = make_bridge(termux_printing(tmp_path, "termux-sensor", '{"sensors": ' + NESTED))
    listed = await bridge.sensor_list()  # the tool's answer, with the failure in its fixed words
    assert "motion" not in {s["sensor"] for s in listed["sensors"] if s["available"]}
    assert "cannot be read" in listed["error"] and "[[" not in listed["error"]


async def test_a_release_that_never_answers_is_killed_too(tmp_path: Path):
    """termux-sensor hangs on the read and again on ``-c`` (the Termux:API service is stuck): the read ends
    within its bounds and leaves no process behind. Before, the ``-c`` was waited on and then left running,
    one more per timed-out read."""
    b = tmp_path / "bin"
    b.mkdir()
    pids = tmp_path / "pids"
    script(b, "termux-sensor", f"""
echo $$ >> {shlex.quote(str(pids))}
case "$1" in
  -l) echo '{{"sensors": ["BMP390 Pressure"]}}' ;;
  *) exec sleep 600 ;;
esac""")
    src = TermuxSource(str(b), timeout=1)
    with pytest.raises(SourceUnavailable, match="no answer within 1 s"):
        await src.read(SensorKind.barometer)
    assert calls(b)[-1] == "termux-sensor -c"
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 3  # -l, -s, -c
    alive = [p for p in started if Path(f"/proc/{p}").exists()
             and "zombie" not in Path(f"/proc/{p}/status").read_text()]
    assert alive == []
