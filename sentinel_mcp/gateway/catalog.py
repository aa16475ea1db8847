"""The catalog: every upstream's tools, resources and prompts under the names the client sees.

Tools and prompts are exposed as ``<prefix>__<name>`` (prefix defaults to the server name; an empty prefix
wraps a server transparently). Names keep to MCP's 64-character limit and allowed characters; collisions are
resolved deterministically (the alphabetically first server keeps the plain name, others get a hash suffix).
Resources keep their URIs and are routed by exact URI, then by URI template.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from mcp.shared.uri_template import UriTemplate
from mcp.types import Prompt, Resource, ResourceTemplate, Tool

if TYPE_CHECKING:
    from sentinel_mcp.gateway.upstream import Upstream

log = logging.getLogger(__name__)

SEP = "__"
MAX_NAME = 64
_BAD = re.compile(r"[^A-Za-z0-9_.\-]")


def _short_hash(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:6]


def exposed_name(prefix: str, name: str, salt: str = "") -> str:
    """``prefix__name``, sanitized and kept within 64 characters (a hash suffix keeps it unique)."""
    full = _BAD.sub("_", f"{prefix}{SEP}{name}" if prefix else name)
    if salt:
        full = f"{full[:MAX_NAME - 7]}~{_short_hash(salt)}".replace("~", "_")
    if len(full) > MAX_NAME:
        full = f"{full[:MAX_NAME - 7]}_{_short_hash(prefix + SEP + name)}"
    return full


@dataclass(frozen=True)
class ToolRoute:
    upstream: str
    tool: str  # the upstream's own name
    exposed: Tool  # the Tool as the client sees it (renamed, everything else verbatim)


@dataclass(frozen=True)
class PromptRoute:
    upstream: str
    prompt: str
    exposed: Prompt


class Catalog:
    def __init__(self) -> None:
        self.tools: dict[str, ToolRoute] = {}
        self.prompts: dict[str, PromptRoute] = {}
        self.resources: dict[str, tuple[str, Resource]] = {}
        self.templates: list[tuple[UriTemplate, str, ResourceTemplate]] = []
        self.version = 0

    def rebuild(self, upstreams: Iterable["Upstream"]) -> None:
        ordered = sorted(upstreams, key=lambda u: u.name)
        tools: dict[str, ToolRoute] = {}
        prompts: dict[str, PromptRoute] = {}
        resources: dict[str, tuple[str, Resource]] = {}
        templates: list[tuple[UriTemplate, str, ResourceTemplate]] = []
        for up in ordered:
            prefix = up.name if up.prefix is None else up.prefix
            for tname in sorted(up.tools):
                tool = up.tools[tname]
                name = exposed_name(prefix, tname)
                if name in tools:
                    log.warning("tool name collision on %r: %s.%s renamed", name, up.name, tname)
                    name = exposed_name(prefix, tname, salt=f"{up.name}:{tname}")
                tools[name] = ToolRoute(up.name, tname, tool.model_copy(update={"name": name}))
            for prompt in sorted(up.prompts, key=lambda p: p.name):
                name = exposed_name(prefix, prompt.name)
                if name in prompts:
                    name = exposed_name(prefix, prompt.name, salt=f"{up.name}:{prompt.name}")
                prompts[name] = PromptRoute(up.name, prompt.name, prompt.model_copy(update={"name": name}))
            for res in up.resources:
                if res.uri in resources:
                    log.warning("resource %s offered by %s and %s; %s serves it", res.uri,
                                resources[res.uri][0], up.name, resources[res.uri][0])
                    continue
                resources[res.uri] = (up.name, res)
            for tpl in up.resource_templates:
                try:
                    templates.append((UriTemplate.parse(tpl.uri_template), up.name, tpl))
                except Exception:  # noqa: BLE001 - a bad template from one upstream is skipped, not fatal
                    log.warning("upstream %s: unusable URI template %r", up.name, tpl.uri_template)
        self.tools, self.prompts, self.resources, self.templates = tools, prompts, resources, templates
        self.version += 1

    def route_resource(self, uri: str) -> str | None:
        hit = self.resources.get(uri)
        if hit is not None:
            return hit[0]
        for template, upstream, _ in self.templates:
            if template.match(uri) is not None:
                return upstream
        return None

    def tool_list(self) -> list[Tool]:
        return [r.exposed for r in self.tools.values()]
