"""What a connected upstream offers: every page of its tools, resources, templates and prompts, listed on
connect and again when it announces a change, and the capabilities it declared (or a built-in's record).

A listing is the upstream's word, so it is bounded: at most ``MAX_PAGES`` pages, ``MAX_ITEMS`` items and
``MAX_LISTING_BYTES`` of items and cursors per kind, a cursor seen twice ends it, no number JSON has no
spelling for (``NaN``, an infinity: a schema's bound, default or enum, ``_meta``), and the whole refresh has
the upstream's call timeout. Past a bound the listing is refused (at connect the connection fails and is
retried with back-off; after a change the previous catalog stays) and the reason is the upstream's
``last_error`` and its ``listing_problem`` (a problem /healthz reports: degraded, until a listing fits again).
Change notices never pile up: one refresh runs at a time, notices that arrive meanwhile ask for one more, and
a refresh starts at least ``MIN_RELIST_SECONDS`` after the one before (a notice that came just after a refresh
ended waits too: before, it started the next at once).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable

import anyio
import pydantic_core
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import Prompt, Resource, ResourceTemplate, Tool
from pydantic import BaseModel

from sentinel_mcp.core.display_text import compose
from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.core.settings import non_finite
from sentinel_mcp.core.utf8_text import utf8_size
from sentinel_mcp.gateway.annotation_trust import trusts_annotations, without_hints
from sentinel_mcp.gateway.notice_budget import NoticeBudget
from sentinel_mcp.gateway.upstream_client import describe_error

if TYPE_CHECKING:
    from sentinel_mcp.gateway.upstream import UpstreamHooks

log = logging.getLogger(__name__)

METHOD_NOT_FOUND = -32601
MAX_PAGES = 100
MAX_ITEMS = 5_000  # tools (or resources, templates, prompts) of one upstream
MAX_LISTING_BYTES = 32_000_000  # of one kind's items, as JSON
REFRESH_FAILED = "refresh after list_changed failed: "
# refreshes after change notices start at most this often: an upstream announcing a change every 10 ms had
# its whole listing (3.5 MB) read, the catalog rebuilt and every session told, back to back, a third of the
# gateway's calls lost to it; a real change is seen within this time
MIN_RELIST_SECONDS = 1.0


class ListingRefused(GatewayError):
    """An upstream's listing passed a bound (pages, items, bytes, a repeated cursor, its timeout)."""


class UpstreamListing:
    """Mixed into ``Upstream`` (which owns the state)."""

    name: str
    target: Any
    client: Client | None
    hooks: UpstreamHooks
    tools: dict[str, Tool]
    resources: list[Resource]
    resource_templates: list[ResourceTemplate]
    prompts: list[Prompt]
    _described: Any
    last_error: str | None
    ready: anyio.Event
    listing_problem: str | None = None  # the last listing was refused (reported until one fits again)
    _relisting: asyncio.Task[None] | None = None
    _relist_again = False
    relists_paced = 0  # refreshes that waited for MIN_RELIST_SECONDS after the one before
    _relisted_at = -math.inf  # when the last refresh after a change started (monotonic)
    _listing_scope: anyio.CancelScope | None = None  # the refresh running now (ended early by garbage)
    _listing_garbage: str | None = None
    notice_budget: NoticeBudget

    def _listing_lost(self, what: str) -> None:
        """The upstream wrote something that is not a JSON-RPC message (``_on_garbage``): a listing waiting
        for its answer ends now, saying so, instead of at its timeout as if the server were slow."""
        scope = self._listing_scope
        if scope is not None and self._listing_garbage is None:
            self._listing_garbage = what
            scope.deadline = -math.inf

    @property
    def timeout(self) -> float:
        raise NotImplementedError

    async def refresh(self) -> None:
        """List everything again, within the upstream's call timeout; raises ``ListingRefused`` past a bound
        (the previous catalog is kept: nothing is replaced until every listing is complete)."""
        try:
            try:
                with anyio.fail_after(self.timeout) as scope:
                    self._listing_scope, self._listing_garbage = scope, None
                    await self._refresh()
            except TimeoutError:
                if self._listing_garbage is not None:  # its answer was lost in a message that cannot be read
                    raise ListingRefused(
                        f"its listing's answer could not be read ({self._listing_garbage})") from None
                raise ListingRefused(f"listing took longer than {self.timeout:g} s") from None
            finally:
                self._listing_scope = None
        except ListingRefused as e:
            kept = "the catalog before the change is kept" if self.ready.is_set() else "it is not served"
            self.listing_problem = f"upstream {self.name}: listing refused ({e}); {kept}"
            raise
        self.listing_problem = None

    async def _refresh(self) -> None:
        client = self.client
        if client is None:
            return
        caps = client.server_capabilities
        tools: list[Tool] = []
        if caps is None or caps.tools is not None:
            tools = await _all_pages(client.list_tools, "tools")
        resources: list[Resource] = []
        templates: list[ResourceTemplate] = []
        if caps is not None and caps.resources is not None:
            resources = await _all_pages(client.list_resources, "resources")
            # the resources capability does not promise templates: a server without them answers -32601
            templates = await _all_pages(client.list_resource_templates, "resource_templates", optional=True)
        prompts: list[Prompt] = []
        if caps is not None and caps.prompts is not None:
            prompts = await _all_pages(client.list_prompts, "prompts")
        if not trusts_annotations(self.target):
            tools = [without_hints(t) for t in tools]
        self.tools = {t.name: t for t in tools}
        self.resources, self.resource_templates, self.prompts = resources, templates, prompts

    def relist(self) -> None:
        """A change notice: refresh now, or once more after the refresh that is running (then it reaches no
        client: counted against the upstream's notice budget)."""
        if self._relisting is not None and not self._relisting.done():
            self._relist_again = True
            self.notice_budget.spend()
            return
        self._relisting = asyncio.get_running_loop().create_task(self._relist_while_asked())

    async def _relist_while_asked(self) -> None:
        again = True
        while again:  # notices that came during a refresh: one more, not sooner than the pace allows
            wait = self._relisted_at + MIN_RELIST_SECONDS - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
                self.relists_paced += 1
            self._relist_again = False  # notices from here on are answered by this refresh or the next
            self._relisted_at = time.monotonic()
            await self._refresh_and_announce()
            again = self._relist_again

    def stop_relisting(self) -> None:
        """The connection ended: a refresh of it (and any asked for) is moot."""
        if self._relisting is not None:
            self._relisting.cancel()
        self._relisting, self._relist_again = None, False

    async def _refresh_and_announce(self) -> None:
        try:
            await self.refresh()
        except Exception as e:  # noqa: BLE001
            self.last_error = compose(REFRESH_FAILED, describe_error(e))  # an upstream's words marked once
            log.warning("upstream %s: %s", self.name, self.last_error)
            return
        if self.last_error is not None and self.last_error.startswith(REFRESH_FAILED):
            self.last_error = None  # it lists within bounds again
        try:
            await self.hooks.catalog_changed(self)  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - the task's error would otherwise go unseen
            log.exception("upstream %s: catalog update failed", self.name)

    def offers(self, capability: str, detail: str | None = None) -> bool:
        """Whether the connected upstream declared a capability (e.g. "completions", "resources"/"subscribe").
        """
        caps = self.client.server_capabilities if self.client is not None else None
        if caps is None and self._described is not None:
            caps = self._described.capabilities
        value = getattr(caps, capability, None) if caps is not None else None
        return value is not None and (detail is None or bool(getattr(value, detail, False)))


async def _all_pages(
    list_page: Callable[..., Awaitable[Any]], field_name: str, *, optional: bool = False
) -> list[Any]:
    """Walk every page of an upstream list (tools, resources, templates, prompts), within the bounds."""
    items: list[Any] = []
    size = 0
    cursor = None
    seen: set[bytes] = set()
    for _ in range(MAX_PAGES):
        try:
            page = await list_page(cursor=cursor)
        except MCPError as e:
            if optional and e.code == METHOD_NOT_FOUND:
                return items
            raise
        got = getattr(page, field_name)
        items.extend(got)
        if len(items) > MAX_ITEMS:
            raise ListingRefused(f"it lists more than {MAX_ITEMS:,} {field_name}")
        cursor = page.next_cursor
        # the cursors count too, and only their digests are kept: 100 pages of no items, each with a
        # cursor of 3 MB, held 300 MB in ``seen`` (1.6 GB over HTTP) within every other bound
        for item in got:
            size += utf8_size(_written(item, field_name))
            _finite(item, field_name)
        size += utf8_size(cursor or "")
        if size > MAX_LISTING_BYTES:
            raise ListingRefused(f"its {field_name} take more than {MAX_LISTING_BYTES:,} bytes")
        if not cursor:
            return items
        digest = hashlib.sha256(cursor.encode("utf-8", "surrogatepass")).digest()
        if digest in seen:
            raise ListingRefused(f"its {field_name} listing repeats the cursor {cursor[:40]!r}")
        seen.add(digest)
    raise ListingRefused(f"its {field_name} listing has more than {MAX_PAGES} pages")


def _item_name(item: Any) -> str:
    return str(getattr(item, "name", None) or getattr(item, "uri_template", None) or getattr(item, "uri", ""))


def _written(item: BaseModel, field_name: str) -> str:
    """The item as JSON; an item that cannot be written (a lone surrogate in a text: the readers of a message
    refuse it, this bound behind them) is a listing refused, naming it, never the serializer's own error."""
    try:
        return item.model_dump_json(by_alias=True, exclude_none=True)
    except pydantic_core.PydanticSerializationError:
        raise ListingRefused(f"its {field_name} listing: {_item_name(item)[:40]!r} holds a text with no "
                             "UTF-8 spelling (a lone surrogate)") from None


def _finite(item: Any, field_name: str) -> None:
    """Raises ``ListingRefused`` for an item holding ``NaN`` or an infinity (the readers take ``NaN``,
    ``Infinity`` and an overflowing ``1e999``): the gateway would check arguments against ``maximum: inf``
    while every client is listed ``null`` there (the serializer's spelling), a schema that says otherwise."""
    if _all_finite(item):
        return
    where = non_finite(item)  # where, walked again the slow way (it names each key on its way down)
    if where is not None:
        raise ListingRefused(f"its {field_name} listing: {_item_name(item)[:40]!r} holds a number JSON has "
                             f"no spelling for (NaN or an infinity) at {where[:80]!r}")





def _all_finite(item: BaseModel) -> bool:
    """Whether no number in ``item`` (its fields, extra fields, the models and JSON values within) is ``NaN``
    or infinite. Its JSON first, with such numbers spelled as the constants (5,000 tools of 20 properties: 65
    ms of CPU, about what its size's dump costs): without them, none is there; with them (or a text holding
    the words, or what does not encode) the values are walked (115 ms), and only a real one's place is looked
    for (``settings.non_finite`` names each key on its way down: 3.3 s for all of them)."""
    try:
        text = pydantic_core.to_json([item.__dict__, item.__pydantic_extra__], inf_nan_mode="constants")
        if b"NaN" not in text and b"Infinity" not in text:
            return True
    except (ValueError, RecursionError):  # a lone surrogate, nesting past the encoder's limit
        pass
    stack: list[Any] = [item]
    while stack:
        value = stack.pop()
        if isinstance(value, BaseModel):
            values: Any = [*value.__dict__.values(), *(value.__pydantic_extra__ or {}).values()]
        else:
            values = value.values() if type(value) is dict else value
        for v in values:
            t = type(v)
            if t is float:
                if not math.isfinite(v):
                    return False
            elif t is dict or t is list or t is tuple or isinstance(v, BaseModel):
                stack.append(v)
    return True
