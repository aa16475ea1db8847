"""The screen's image as the device sends it (``screencap -p``), opened as what it must be: a PNG of a phone's
screen, its size checked from the header before a pixel is decoded.

The bytes are the device's (a hostile adb server or phone): a 300 KB PNG can declare 9000x9000 RGBA, which
decodes to 650 MB and keeps the gateway busy for seconds; and Pillow would otherwise pick any of its decoders
by the bytes' signature (TIFF, PSD, EPS through Ghostscript, ...). Pillow's own bomb check starts only at 89
million pixels, far above any screen.
"""

from __future__ import annotations

import io
import warnings

from PIL import Image

from .errors import DeviceError

# a 4K tablet is 3840x2160 (8.3 million), a large phone 1440x3200 (4.6 million)
MAX_PIXELS = 4096 * 4096


class NotAScreenImage(DeviceError, ValueError):
    """The bytes are not a PNG of a screen's size; the message says which, never the bytes."""


def open_screen_png(data: bytes) -> Image.Image:
    """The decoded image; NotAScreenImage (before decoding) for anything but a PNG of at most MAX_PIXELS."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data), formats=("PNG",))  # reads the header only
    except (OSError, ValueError, Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise NotAScreenImage("not a PNG image") from None
    width, height = image.size
    if width * height > MAX_PIXELS:
        image.close()
        raise NotAScreenImage(f"a {width}x{height} image, more than a screen's {MAX_PIXELS:,} pixels")
    try:
        image.load()
    except (OSError, ValueError, SyntaxError) as exc:  # a truncated or corrupt PNG
        raise NotAScreenImage(f"a PNG that does not decode ({type(exc).__name__})") from None
    return image
