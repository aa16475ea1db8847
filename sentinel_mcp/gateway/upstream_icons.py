"""An upstream's icons (on its tools, prompts, resources and templates, and on a resource link in a tool's
result: ``blocks_with_safe_icons``) as a client gets them: only small raster images carried inline, nothing
the client would fetch or run.

An icon is a URI the client loads and draws. A remote one (``https:``, ``http:``, ``file:``, ...) makes every
client that lists the catalog fetch from a host the upstream chose (a tracking pixel: who uses Sentinel,
when, from where), and a ``data:`` URI may be megabytes, or SVG with script in it. Kept: a ``data:`` URI of
base64 PNG, JPEG, GIF or WebP whose bytes start as that format does, at most ``MAX_ICON_BYTES`` decoded, at
most ``MAX_ICONS`` per item; its ``mimeType`` is the data's own, its ``sizes`` only ``WxH`` or ``any``. Every
other icon is dropped (an allow list: no list of the schemes or types to refuse). An upstream's
``serverInfo`` (and its icons) never reaches a client: Sentinel answers with its own.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Sequence

from mcp.types import Icon, ResourceLink

MAX_ICONS = 4
MAX_ICON_BYTES = 32 * 1024  # decoded: a 64x64 PNG is a few kB
_MAGIC = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),  # and "WEBP" at 8 (checked below)
}
_DATA_URI = re.compile(r"data:(image/[a-z]+);base64,([A-Za-z0-9+/]+={0,2})", re.ASCII)
_SIZE = re.compile(r"[1-9][0-9]{0,3}x[1-9][0-9]{0,3}|any", re.ASCII)


def safe_icon(icon: Icon) -> Icon | None:
    """``icon`` as a client may be given it, or None (dropped)."""
    if len(icon.src) > 4 * MAX_ICON_BYTES // 3 + 64:  # before anything parses it
        return None
    found = _DATA_URI.fullmatch(icon.src)
    if found is None or found[1] not in _MAGIC:
        return None
    try:
        data = base64.b64decode(found[2], validate=True)
    except (binascii.Error, ValueError):
        return None
    mime = found[1]
    if len(data) > MAX_ICON_BYTES or not data.startswith(_MAGIC[mime]):
        return None
    if mime == "image/webp" and data[8:12] != b"WEBP":
        return None
    sizes = [s for s in (icon.sizes or []) if isinstance(s, str) and _SIZE.fullmatch(s)][:MAX_ICONS] or None
    return Icon(src=icon.src, mime_type=mime, sizes=sizes, theme=icon.theme)


def icons_update(item: Any) -> dict[str, Any]:
    """The ``icons`` field of a tool, prompt, resource or template when keeping only safe icons changes it."""
    icons = getattr(item, "icons", None)
    if not icons:
        return {}
    kept = [i for i in (safe_icon(icon) for icon in icons[: MAX_ICONS * 4]) if i is not None][:MAX_ICONS]
    if kept == icons:
        return {}
    return {"icons": kept or None}


def blocks_with_safe_icons(content: Sequence[Any]) -> list[Any] | None:
    """A result's blocks with each resource link's icons kept to the safe ones (a link is drawn as its icon
    too); None when none changes."""
    out: list[Any] | None = None
    for i, block in enumerate(content):
        update = icons_update(block) if isinstance(block, ResourceLink) else None
        if update:
            if out is None:
                out = list(content)
            out[i] = block.model_copy(update=update)
    return out
