"""What a built-in offers (tools, resources, templates, prompts, capabilities), known without building it.

Building every built-in at start-up imports most of Sentinel (device, sensors, swarm: many pydantic models)
only to answer ``tools/list``. ``builtin_descriptions.json`` holds what each of those built-ins answered when
built with the settings recorded beside it (the embedded default's); ``python -m
sentinel_mcp.app.describe_builtins`` writes it from the code and tests/gateway/test_lazy_builtins.py
checks that it still equals what the built-ins register. A built-in whose settings differ from the recorded
ones (or one absent from the file) is built at start-up as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.types import Prompt, Resource, ResourceTemplate, ServerCapabilities, Tool

from sentinel_mcp.core.builtin import traits_of

FILE = Path(__file__).with_name("builtin_descriptions.json")
# built-ins whose start-up has no effect on the rest but their own server: deferring them changes nothing
# else (the llm shares its model status, the agent its trace store, with /healthz and the console at start)
DEFERRABLE = ("sentinel", "device", "sensors", "swarm", "a2a")
# deferred only by a front that reads none of their shared objects at start: over stdio (no console there to
# follow the agent's trace store); the HTTP front builds them at start (console/agent_pages.py)
STDIO_DEFERRABLE = ("agent",)
RECORDED = DEFERRABLE + STDIO_DEFERRABLE


@dataclass(frozen=True)
class Description:
    protocol_version: str
    capabilities: ServerCapabilities
    tools: list[Tool]
    resources: list[Resource]
    resource_templates: list[ResourceTemplate]
    prompts: list[Prompt]
    timeout: float  # the server's declared ``BuiltinTraits.timeout``
    protocol: str  # its ``BuiltinTraits.protocol``
    result_meta: frozenset[str]


def plain(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def record(up: Any, server: Any) -> dict[str, Any]:
    """The JSON entry of a connected built-in upstream ``up`` built as ``server``."""

    def dump(items: Any) -> list[Any]:
        return [i.model_dump(mode="json", by_alias=True, exclude_unset=True) for i in items]

    caps = up.client.server_capabilities
    traits = traits_of(server)
    return {
        "protocol_version": up.protocol_version,
        "capabilities": caps.model_dump(mode="json", by_alias=True, exclude_unset=True),
        "tools": dump(up.tools.values()),
        "resources": dump(up.resources),
        "resource_templates": dump(up.resource_templates),
        "prompts": dump(up.prompts),
        "timeout": traits.timeout,
        "protocol": traits.protocol,
        "result_meta": sorted(traits.result_meta),
    }


def load(name: str, settings: dict[str, Any], path: Path = FILE,
         deferrable: tuple[str, ...] = DEFERRABLE) -> Description | None:
    """The recorded description of built-in ``name`` if it was recorded with these settings and the front
    may defer it (``deferrable``), else None."""
    if name not in deferrable:
        return None
    try:
        entry = json.loads(path.read_text(encoding="utf-8")).get(name)
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("settings") != plain(settings):
        return None
    return Description(
        protocol_version=entry["protocol_version"],
        capabilities=ServerCapabilities.model_validate(entry["capabilities"]),
        tools=[Tool.model_validate(t) for t in entry["tools"]],
        resources=[Resource.model_validate(r) for r in entry["resources"]],
        resource_templates=[ResourceTemplate.model_validate(r) for r in entry["resource_templates"]],
        prompts=[Prompt.model_validate(p) for p in entry["prompts"]],
        timeout=float(entry["timeout"]),
        protocol=entry["protocol"],
        result_meta=frozenset(entry["result_meta"]),
    )
