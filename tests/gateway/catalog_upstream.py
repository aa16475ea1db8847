"""An upstream as the catalog reads one (name, prefix, tools, prompts, resources), no server behind it."""

from __future__ import annotations

from mcp.types import Prompt, Tool


class StandInUpstream:
    def __init__(self, name, tools, prefix="", prompts=()):  # noqa: ANN001
        self.name, self.prefix = name, prefix
        self.tools = {t: Tool(name=t, input_schema={"type": "object"}) for t in tools}
        self.prompts = [Prompt(name=p) for p in prompts]
        self.resources, self.resource_templates = [], []
        self.builtin = False
