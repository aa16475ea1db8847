"""Screenshots as MCP image content, downscaled so the longest side is at most 1280 px.

JPEG (quality 80) rather than PNG: a full-resolution phone PNG can exceed clients' context and
message limits (mobile-mcp #236); text stays legible at this size and quality.
"""

from __future__ import annotations

import base64
import io

from mcp.types import ImageContent
from PIL import Image

from .device_words import quoted
from .errors import DeviceCommandFailed
from .screen_image import NotAScreenImage, open_screen_png

MAX_SIDE = 1280


def to_image_content(png: bytes, max_side: int = MAX_SIDE) -> tuple[ImageContent, dict[str, int]]:
    """Decoding takes a fraction of a second for a real screen: callers run it in a worker thread."""
    try:
        image: Image.Image = open_screen_png(png)
    except NotAScreenImage as exc:
        # the device's bytes, quoted: its line breaks, escapes and direction marks never become Sentinel's
        head = quoted(png[:60].decode("utf-8", errors="replace")) if png.strip() else "empty output"
        raise DeviceCommandFailed(f"screencap did not return a screen image: {exc} ({head})") from None
    original = image.size
    scale = min(1.0, max_side / max(original))
    if scale < 1.0:
        image = image.resize(
            (max(1, round(original[0] * scale)), max(1, round(original[1] * scale))), Image.Resampling.LANCZOS
        )
    # a new image of the pixels alone: Pillow wrote a PNG text chunk named "comment" (the device's words) in
    # the JPEG; whatever else of the original a later Pillow would carry over stays behind too
    rgb = image.convert("RGB")
    buf = io.BytesIO()
    Image.frombytes("RGB", rgb.size, rgb.tobytes()).save(buf, format="JPEG", quality=80)
    info = {
        "width": image.size[0],
        "height": image.size[1],
        "original_width": original[0],
        "original_height": original[1],
    }
    return ImageContent(
        type="image", data=base64.b64encode(buf.getvalue()).decode(), mime_type="image/jpeg"
    ), info
