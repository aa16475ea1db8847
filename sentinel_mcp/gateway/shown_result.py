"""An upstream's tool result (or prompt) as the client gets its blocks: its text never in Sentinel's voice
(``own_voice``), no resource under another's URI (``foreign_resources``), a resource link's icons only the
safe ones (``upstream_icons``). A built-in's blocks are Sentinel's own: only the resource check applies.

Showing a block takes care (an upstream's text in Sentinel's voice is attributed), so an outside server's
result or prompt of more blocks than a client shows is refused before any is looked at (``too_many_blocks``,
checked as the result is parsed: result_shape.py): 100,000 blocks, 2.7 MB and well within the answer's byte
bound, held the event loop for 10 s, every other caller and the other upstreams' health checks waiting.

Structured content in Sentinel's voice has each such string headed by the attribution in place (a client
may give the model the object rather than the text), and a text block that mirrors the object (its JSON, as
MCP asks a server to send) becomes the marked object's JSON: the two still agree. Marked, a value may no
longer fit the tool's output schema (an ``enum``, a ``pattern``): the result check after this refuses it
then, in Sentinel's own words. Refusing every such result was the other choice: "Sentinel-2" is a satellite's
name in honest data, and marking costs that data a line where refusing would cost the whole answer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import anyio
from mcp.types import CallToolResult, TextContent

from sentinel_mcp.core.display_text import Marked, compose, safe_text

from sentinel_mcp.gateway.foreign_resources import without_foreign_blocks
from sentinel_mcp.core.own_voice import attributed_blocks, attributed_structure, structure_strings
from sentinel_mcp.gateway.result_check import INLINE_BYTES
from sentinel_mcp.gateway.result_shape import MAX_CONTENT_BLOCKS, too_many_blocks
from sentinel_mcp.gateway.upstream_icons import blocks_with_safe_icons

__all__ = ["MAX_CONTENT_BLOCKS", "LongStructure", "shown_blocks", "shown_result", "too_many_blocks",
           "unfit_once_marked"]

if TYPE_CHECKING:
    from sentinel_mcp.gateway.catalog import Catalog


def shown_blocks(
    content: Sequence[Any], server: str, catalog: "Catalog", *, builtin: bool, settled: Sequence[Any] = ()
) -> list[Any] | None:
    """``content`` as the client gets it; None when nothing changes. ``settled``: blocks whose voice is
    settled already (a structure's marked JSON mirror: each of its strings judged alone, and headed in
    place; headed again as a whole, it would no longer be the object's JSON)."""
    for block in content:
        if type(block) is not TextContent:
            break
    else:
        # text blocks only (the common result): no resource link's icons, no embedded resource, so only the
        # voice check can change one; one pass instead of three (issue 21)
        attributed = None if builtin else attributed_blocks(content, server, settled)
        return None if attributed is None else list(attributed)
    shown: Sequence[Any] = content
    if not builtin:
        # attributed before Sentinel's own notes (a withheld resource's) join the blocks
        shown = attributed_blocks(shown, server, settled) or shown
        shown = blocks_with_safe_icons(shown) or shown
    shown = without_foreign_blocks(shown, server, catalog, builtin=builtin) or shown
    return None if shown is content else list(shown)


def shown_result(
    result: CallToolResult, server: str, catalog: "Catalog", *, builtin: bool
) -> CallToolResult | LongStructure:
    """``result`` as the client gets it, or ``LongStructure`` when its structured content is too long to walk
    on the event loop: its caller awaits ``LongStructure.shown`` then."""
    if not builtin and result.structured_content is not None:
        # one walk tells a long structure and reads a short one's strings (issue 21: it was two)
        strings = structure_strings(result.structured_content, INLINE_BYTES)
        if strings is None:
            return LongStructure(result, server, catalog)
        result, settled = _structure_attributed(result, server, strings)
        return _with_shown_blocks(result, server, catalog, builtin=builtin, settled=settled)
    return _with_shown_blocks(result, server, catalog, builtin=builtin)


@dataclass(frozen=True, slots=True)
class LongStructure:
    """An outside result whose structured content is past ``INLINE_BYTES`` (as ``result_check`` has it): its
    walk for Sentinel's voice held the event loop (600k strings: 0.45-0.66 s at load ~11), every other caller
    waiting. Walked in a worker thread, as a long value's schema check is; the walk builds a copy and changes
    nothing in place, and its wait is shielded as that check's: a cancel lands after it, where it would have
    with the walk on the event loop."""

    result: CallToolResult
    server: str
    catalog: "Catalog"

    async def shown(self) -> CallToolResult:
        with anyio.CancelScope(shield=True):
            marked, settled = await anyio.to_thread.run_sync(_structure_attributed, self.result, self.server)
        return _with_shown_blocks(marked, self.server, self.catalog, builtin=False, settled=settled)


def unfit_once_marked(server: str, own: str | None = None) -> Marked:
    """Why a result whose structured content was marked (Sentinel's voice, attributed) is refused by its
    output schema: said plainly rather than by quoting the marked value. ``own``: why the server's result as
    it wrote it does not fit either (``result_check``'s words, its values already shown), said first: the
    marking's reason alone would hide the schema's own."""
    marking = ("once its words in Sentinel's voice are headed as the server ", safe_text(server, 80),
               "'s (as they must be, not to be read as Sentinel's)")
    if own is None:
        return compose("its result does not fit its output schema ", *marking)
    return compose(Marked(own), "; nor does it ", *marking)


def _with_shown_blocks(result: CallToolResult, server: str, catalog: "Catalog", *, builtin: bool,
                       settled: Sequence[Any] = ()) -> CallToolResult:
    content = shown_blocks(result.content, server, catalog, builtin=builtin, settled=settled)
    return result if content is None else result.model_copy(update={"content": content})


def _structure_attributed(result: CallToolResult, server: str, strings: list[str] | None = None
                          ) -> tuple[CallToolResult, tuple[Any, ...]]:
    """``result`` with its structured content's strings in Sentinel's voice attributed, and its text mirror
    following (see the module's note), with the mirror's blocks; itself when there is none. ``strings``: its
    strings, when read."""
    data = result.structured_content
    marked = attributed_structure(data, server, strings)
    if marked is None:
        return result, ()
    mirror = json.dumps(marked, ensure_ascii=False)
    mirrors = {i: block.model_copy(update={"text": mirror})
               for i, block in enumerate(result.content) if _mirrors(block, data)}
    content = [mirrors.get(i, block) for i, block in enumerate(result.content)]
    shown = result.model_copy(update={"structured_content": marked, "content": content})
    return shown, tuple(mirrors.values())


def _mirrors(block: Any, data: Any) -> bool:
    if type(block) is not TextContent:
        return False
    try:
        return bool(json.loads(block.text) == data)
    except (ValueError, RecursionError):
        return False
