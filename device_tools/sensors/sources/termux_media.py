"""Camera and microphone through termux-api (``termux-camera-photo``, ``termux-microphone-record``).

Both only run after the bridge's consent check, like every sensor. A photo is downscaled to at most 640 px and
re-encoded as JPEG from its pixels alone (no EXIF, comment, XMP or profile: no GPS tag leaves the phone); a
recording is a few seconds of AAC. Files live in a private temporary directory that is removed after the read,
whatever happens.
"""

from __future__ import annotations

import asyncio
import base64
import io
import tempfile
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from PIL import Image, UnidentifiedImageError

from device_tools.sensors.errors import MalformedOutput, NoReading

PHOTO_MAX_SIDE = 640
PHOTO_MAX_BYTES = 20_000_000  # what the camera may write before we refuse to read it
# checked from the header before decoding: a small PNG can declare 12000x12000 px (a decompression bomb)
PHOTO_MAX_PIXELS = 50_000_000
PHOTO_MAX_DECODED_PIXELS = 16_000_000  # after JPEG's reduced-scale draft; other formats decode in full
RECORD_SECONDS = 3
AUDIO_MAX_BYTES = 2_000_000

Run = Callable[..., Awaitable[str]]  # TermuxSource._run(command, *args) -> stdout


def _api_error(out: str) -> bool:
    text = out.strip()
    return "API_ERROR" in text or "error" in text.lower()


async def take_photo(run: Run, camera: str = "0") -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="sentinel-camera-") as tmp:
        path = Path(tmp) / "photo.jpg"
        out = await run("termux-camera-photo", "-c", camera, str(path))
        if not path.exists() or path.stat().st_size == 0:
            problem = " (Termux:API reported an error)" if _api_error(out) else ""
            raise NoReading(
                f"the camera returned no photo{problem} (is the camera permission granted to Termux:API?)"
            )
        if path.stat().st_size > PHOTO_MAX_BYTES:
            raise MalformedOutput(f"the photo is larger than {PHOTO_MAX_BYTES} bytes")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", Image.DecompressionBombWarning)  # PIL's own check, as an error
                taken = Image.open(path)
            with taken:
                original = taken.size  # from the header: nothing is decoded yet
                if original[0] * original[1] > PHOTO_MAX_PIXELS:
                    raise MalformedOutput(f"the photo has more than {PHOTO_MAX_PIXELS} pixels")
                taken.draft("RGB", (PHOTO_MAX_SIDE, PHOTO_MAX_SIDE))  # JPEG: decode at a reduced scale
                if taken.size[0] * taken.size[1] > PHOTO_MAX_DECODED_PIXELS:  # what load() would allocate
                    raise MalformedOutput(f"the photo decodes to over {PHOTO_MAX_DECODED_PIXELS} px")
                taken.load()
                image = taken.convert("RGB")
                image.thumbnail((PHOTO_MAX_SIDE, PHOTO_MAX_SIDE))
                # a new image of the pixels alone: Pillow copies what it kept of the original (its comment, a
                # position a camera or app wrote there) into the saved JPEG; EXIF, XMP, ICC and maker
                # segments stay behind too, whatever a later Pillow would carry over
                image = Image.frombytes("RGB", image.size, image.tobytes())
                buf = io.BytesIO()
                image.save(buf, format="JPEG", quality=80)
        except (UnidentifiedImageError, OSError, Image.DecompressionBombError,
                Image.DecompressionBombWarning):
            raise MalformedOutput("termux-camera-photo wrote no readable image") from None
    return {
        "image_base64": base64.b64encode(buf.getvalue()).decode(),
        "mime_type": "image/jpeg",
        "width": image.width,
        "height": image.height,
        "original_size": list(original),
        "camera": camera,
    }


async def record_audio(run: Run, seconds: int = RECORD_SECONDS) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="sentinel-microphone-") as tmp:
        path = Path(tmp) / "clip.m4a"
        # termux-microphone-record returns at once and records in the Termux:API service for -l seconds
        out = await run("termux-microphone-record", "-f", str(path), "-l", str(seconds), "-e", "aac")
        if _api_error(out) and "started" not in out.lower():
            raise NoReading("the microphone could not record (Termux:API reported an error)")
        try:
            await asyncio.sleep(seconds + 0.5)
        finally:
            await run("termux-microphone-record", "-q")  # stop it, even when the read is cancelled
        if not path.exists() or path.stat().st_size == 0:
            raise NoReading(
                "the microphone returned no recording (is the microphone permission granted to Termux:API?)"
            )
        if path.stat().st_size > AUDIO_MAX_BYTES:
            raise MalformedOutput(f"the recording is larger than {AUDIO_MAX_BYTES} bytes")
        with path.open("rb") as clip:
            data = clip.read(AUDIO_MAX_BYTES + 1)  # never more, even if the file grew since the stat
        if len(data) > AUDIO_MAX_BYTES:
            raise MalformedOutput(f"the recording is larger than {AUDIO_MAX_BYTES} bytes")
    return {
        "audio_base64": base64.b64encode(data).decode(),
        "mime_type": "audio/mp4",
        "seconds": seconds,
        "bytes": len(data),
    }
