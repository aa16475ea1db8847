"""The front's listings and reads: tools, resources, templates and prompts, each a page of what the caller's
principal may reach (the port filters), and a resource read or a prompt fetched from the upstream owning it.
Mixed into ``Front`` (front.py), which owns the port, the page size and who is calling.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
)

from sentinel_mcp.core.display_text import Marked, compose, safe_text
from sentinel_mcp.core.echoed_text import echoed
from sentinel_mcp.core.port import FrontPort, NotInCatalog
from sentinel_mcp.gateway.conversations import Conversation, SessionRefused
from sentinel_mcp.gateway.front_utilities import resource_not_found
from sentinel_mcp.gateway.upstream_client import UpstreamUnavailable
from sentinel_mcp.identity.principal import Principal

T = TypeVar("T")


class CatalogRequests:
    """Mixed into ``Front``."""

    port: FrontPort
    page_size: int

    if TYPE_CHECKING:  # the front's own (a stub here would shadow them)
        def principal(self, ctx: ServerRequestContext) -> Principal: ...

        @staticmethod
        def client_name(ctx: ServerRequestContext) -> str | None: ...

        async def conversation(self, ctx: ServerRequestContext, principal: Principal) -> Conversation: ...

    async def list_tools(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        tools, cursor = _page(params, self.port.list_catalog_tools(self.principal(ctx)), self.page_size)
        return ListToolsResult(tools=tools, next_cursor=cursor)

    async def list_resources(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        items, cursor = _page(params, self.port.list_resources(self.principal(ctx)), self.page_size)
        return ListResourcesResult(resources=items, next_cursor=cursor)

    async def list_resource_templates(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListResourceTemplatesResult:
        items, cursor = _page(params, self.port.list_resource_templates(self.principal(ctx)), self.page_size)
        return ListResourceTemplatesResult(resource_templates=items, next_cursor=cursor)

    async def read_resource(
        self, ctx: ServerRequestContext, params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        principal = self.principal(ctx)
        try:
            # the caller's conversation, as its tool calls resolve it: a built-in's resource (the facts
            # summary) shows that conversation's state and no other's
            conv = await self.conversation(ctx, principal)
        except SessionRefused as e:
            raise MCPError(code=INVALID_PARAMS, message=f"sentinel: {e}") from None
        try:
            return await self.port.read_resource(
                params.uri, principal, self.client_name(ctx), session=conv.id
            )
        except NotInCatalog:
            raise resource_not_found(
                params.uri
            ) from None  # one the caller may not use is as unknown as a missing one
        except UpstreamUnavailable as e:
            raise MCPError(code=-32603, message=str(e)) from None

    async def list_prompts(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListPromptsResult:
        items, cursor = _page(params, self.port.list_prompts(self.principal(ctx)), self.page_size)
        return ListPromptsResult(prompts=items, next_cursor=cursor)

    async def get_prompt(self, ctx: ServerRequestContext, params: GetPromptRequestParams) -> GetPromptResult:
        try:
            return await self.port.get_prompt(params.name, params.arguments, self.principal(ctx))
        except NotInCatalog:
            raise MCPError(code=INVALID_PARAMS,
                           message=compose("unknown prompt: ", echoed(params.name))) from None
        except UpstreamUnavailable as e:
            raise MCPError(code=-32603, message=str(e)) from None


def _page(params: PaginatedRequestParams | None, items: list[T], size: int) -> tuple[list[T], str | None]:
    """The page of ``items`` the request's cursor asks for, and the next page's cursor (None: the last)."""
    cursor = params.cursor if params is not None else None
    # only a cursor this front gave out: plain ASCII digits within the list (``int`` alone would also take
    # "-3", " 7", "1_0" and other scripts' digits)
    if cursor is None or cursor == "":
        start = 0
    elif cursor.isascii() and cursor.isdigit() and len(cursor) <= 9 and int(cursor) <= len(items):
        start = int(cursor)
    else:
        raise MCPError(code=INVALID_PARAMS, message=Marked(f"invalid cursor {safe_text(cursor[:40])!r}"))
    end = min(len(items), start + size)
    return items[start:end], (str(end) if end < len(items) else None)
