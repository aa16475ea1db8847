"""The segments of a JPEG before its scan, where every kind of metadata sits (EXIF, XMP, ICC, comments, maker
data): a test asserts an image that left Sentinel holds only what pixels need."""

from __future__ import annotations

SOS, EOI = 0xDA, 0xD9
# what a baseline or progressive JPEG of pixels needs: frame, tables, restart interval, JFIF's APP0
PIXEL_MARKERS = {0xC0, 0xC1, 0xC2, 0xC4, 0xDB, 0xDD, 0xE0}


def markers(jpeg: bytes) -> list[int]:
    """The segment markers before the scan (the metadata all sits there)."""
    assert jpeg[:2] == b"\xff\xd8"
    found, pos = [], 2
    while pos + 4 <= len(jpeg):
        assert jpeg[pos] == 0xFF, pos
        marker = jpeg[pos + 1]
        if marker in (SOS, EOI):
            break
        found.append(marker)
        pos += 2 + int.from_bytes(jpeg[pos + 2 : pos + 4], "big")
    return found
