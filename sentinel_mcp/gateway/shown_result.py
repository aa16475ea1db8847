"""An upstream's tool result as the client gets its blocks: its text never in Sentinel's voice
(``own_voice``), no resource under another's URI (``foreign_resources``), a resource link's icons only the
safe ones (``upstream_icons``). A built-in's blocks are Sentinel's own: only the resource check applies."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp.types import CallToolResult

from sentinel_mcp.gateway.foreign_resources import without_foreign_blocks
from sentinel_mcp.gateway.own_voice import attributed_blocks
from sentinel_mcp.gateway.upstream_icons import blocks_with_safe_icons

if TYPE_CHECKING:
    from sentinel_mcp.gateway.catalog import Catalog


def shown_result(result: CallToolResult, server: str, catalog: "Catalog", *, builtin: bool) -> CallToolResult:
    content = result.content
    if not builtin:
        # attributed before Sentinel's own notes (a withheld resource's) join the blocks
        content = attributed_blocks(content, server) or content
        content = blocks_with_safe_icons(content) or content
    content = without_foreign_blocks(content, server, catalog, builtin=builtin) or content
    return result if content is result.content else result.model_copy(update={"content": content})
