"""What a connected upstream offers: every page of its tools, resources, templates and prompts, listed on
connect and again when it announces a change, and the capabilities it declared (or a built-in's record)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import Prompt, Resource, ResourceTemplate, Tool

from sentinel_mcp.gateway.upstream_client import describe_error

if TYPE_CHECKING:
    from sentinel_mcp.gateway.upstream import UpstreamHooks

log = logging.getLogger(__name__)

METHOD_NOT_FOUND = -32601


class UpstreamListing:
    """Mixed into ``Upstream`` (which owns the state)."""

    name: str
    client: Client | None
    hooks: UpstreamHooks
    tools: dict[str, Tool]
    resources: list[Resource]
    resource_templates: list[ResourceTemplate]
    prompts: list[Prompt]
    _described: Any

    async def refresh(self) -> None:
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
        self.tools = {t.name: t for t in tools}
        self.resources, self.resource_templates, self.prompts = resources, templates, prompts

    async def _refresh_and_announce(self) -> None:
        try:
            await self.refresh()
        except Exception as e:  # noqa: BLE001
            log.warning("upstream %s: refresh after list_changed failed: %s", self.name, describe_error(e))
            return
        await self.hooks.catalog_changed(self)  # type: ignore[arg-type]

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
    """Walk every page of an upstream list (tools, resources, templates, prompts)."""
    items: list[Any] = []
    cursor = None
    while True:
        try:
            page = await list_page(cursor=cursor)
        except MCPError as e:
            if optional and e.code == METHOD_NOT_FOUND:
                return items
            raise
        items.extend(getattr(page, field_name))
        cursor = page.next_cursor
        if not cursor:
            return items
