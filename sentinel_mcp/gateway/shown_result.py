"""An upstream's tool result (or prompt) as the client gets its blocks: its text never in Sentinel's voice
(``own_voice``), no resource under another's URI (``foreign_resources``), a resource link's icons only the
safe ones (``upstream_icons``). A built-in's blocks are Sentinel's own: only the resource check applies.

Showing a block takes care (an upstream's text in Sentinel's voice is attributed), so an outside server's
result or prompt of more blocks than a client shows is refused before any is looked at (``too_many_blocks``,
checked as the result is parsed: result_shape.py): 100,000 blocks, 2.7 MB and well within the answer's byte
bound, held the event loop for 10 s, every other caller and the other upstreams' health checks waiting."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from mcp.types import CallToolResult, TextContent

from sentinel_mcp.gateway.foreign_resources import without_foreign_blocks
from sentinel_mcp.gateway.own_voice import attributed_blocks
from sentinel_mcp.gateway.result_shape import MAX_CONTENT_BLOCKS, too_many_blocks
from sentinel_mcp.gateway.upstream_icons import blocks_with_safe_icons

__all__ = ["MAX_CONTENT_BLOCKS", "shown_blocks", "shown_result", "too_many_blocks"]

if TYPE_CHECKING:
    from sentinel_mcp.gateway.catalog import Catalog


def shown_blocks(
    content: Sequence[Any], server: str, catalog: "Catalog", *, builtin: bool
) -> list[Any] | None:
    """``content`` as the client gets it; None when nothing changes."""
    for block in content:
        if type(block) is not TextContent:
            break
    else:
        # text blocks only (the common result): no resource link's icons, no embedded resource, so only the
        # voice check can change one; one pass instead of three (issue 21)
        attributed = None if builtin else attributed_blocks(content, server)
        return None if attributed is None else list(attributed)
    shown: Sequence[Any] = content
    if not builtin:
        # attributed before Sentinel's own notes (a withheld resource's) join the blocks
        shown = attributed_blocks(shown, server) or shown
        shown = blocks_with_safe_icons(shown) or shown
    shown = without_foreign_blocks(shown, server, catalog, builtin=builtin) or shown
    return None if shown is content else list(shown)


def shown_result(result: CallToolResult, server: str, catalog: "Catalog", *, builtin: bool) -> CallToolResult:
    content = shown_blocks(result.content, server, catalog, builtin=builtin)
    return result if content is None else result.model_copy(update={"content": content})
