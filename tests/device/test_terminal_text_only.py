"""terminal_run shows text: a command whose output is not text (a NUL, bytes that are not UTF-8) is refused
whole. ``cat`` of a photo in shared storage came back as its bytes decoded with replacement characters, and
the EXIF position the camera wrote (rationals of small numbers: bytes below 0x80, which survive the decoding)
with it, to a caller with no location consent and no photos consent (the camera sensor strips that very
tag)."""

from __future__ import annotations

import io
import struct

import pytest
from PIL import Image

from tests.device.device_helpers import Answers, adb_server, connect

pytestmark = pytest.mark.timeout(120)

PHOTO = "/sdcard/DCIM/Camera/IMG_20261206_073000.jpg"
GPS_IFD = 0x8825


def photo_with_position() -> bytes:
    exif = Image.Exif()
    exif.get_ifd(GPS_IFD).update({1: "N", 2: (52.0, 31.0, 12.0), 3: "E", 4: (13.0, 24.0, 5.0)})
    buf = io.BytesIO()
    Image.new("RGB", (16, 16), (200, 30, 30)).save(buf, format="JPEG", exif=exif)
    return buf.getvalue()


async def test_a_photo_read_with_cat_is_refused_with_its_position(fake_adb, tmp_path):
    photo = photo_with_position()
    latitude = struct.pack(">II", 31, 1)  # the minutes of 52°31′ as the EXIF rational wrote them
    assert latitude in photo
    fake_adb.script[f"cat {PHOTO}"].append(photo)
    fake_adb.script["cat /sdcard/Download/notes.txt"].append(b"milk, eggs \xe2\x80\x94 bread\n")
    async with connect(adb_server(fake_adb, tmp_path), answers=Answers("yes", "yes")) as client:
        r = await client.call_tool("terminal_run", {"command": "cat", "args": [PHOTO]})
        text = await client.call_tool("terminal_run",
                                      {"command": "cat", "args": ["/sdcard/Download/notes.txt"]})
    shown = r.content[0].text
    assert r.is_error and "not text" in shown, shown
    assert latitude.decode("latin-1") not in shown and "Exif" not in shown and "\x00" not in shown
    assert not text.is_error and "milk, eggs — bread" in text.content[0].text
