"""How one area names another's tool: by the server that owns it and the tool's own name, resolved from the
gateway's catalog when called. A literal such as ``"sensors__sensor_read"`` is the exposed name under the
default prefix only; under another prefix it names nothing (or something else). The catalog knows every tool
by its identity, ``<server>__<tool>``, whatever prefix exposes it."""

from __future__ import annotations

from typing import Protocol

from mcp_types import Tool

IDENTITY_SEP = "__"  # the catalog's identity separator (gateway.catalog.identity_of; a test holds them equal)


class FindsTools(Protocol):
    def find_tool(self, name: str) -> Tool | None: ...


class ToolRef(str):
    """``ToolRef("llm", "llm_classify_risk")``: the tool's identity, ``llm__llm_classify_risk``, as a string
    (so
    it passes wherever a tool name did), which the gateway resolves to the name the catalog exposes now."""

    __slots__ = ("server", "tool")
    server: str  # the server that owns the tool, by its configured name ("llm", "sensors", ...)
    tool: str  # the tool's own name on that server

    def __new__(cls, server: str, tool: str) -> "ToolRef":
        if not server or not tool or IDENTITY_SEP in server:
            raise ValueError(f"a tool reference needs a server and a tool name, got {server!r}, {tool!r}")
        ref = super().__new__(cls, f"{server}{IDENTITY_SEP}{tool}")
        ref.server, ref.tool = server, tool
        return ref

    @property
    def identity(self) -> str:
        return str.__str__(self)

    def resolve(self, catalog: FindsTools) -> Tool | None:
        """The tool as the catalog exposes it now (its ``name`` is the exposed name), or None if absent."""
        return catalog.find_tool(self.identity)

    def __repr__(self) -> str:
        return f"ToolRef({self.server!r}, {self.tool!r})"


def exposed_name(ref: ToolRef, catalog: FindsTools) -> str | None:
    tool = ref.resolve(catalog)
    return tool.name if tool is not None else None


def tool_ref(name: str) -> str | ToolRef:
    """A configured tool name, ``server__tool``, as a reference the catalog resolves (its exposed name, else
    the tool by that identity: the default name keeps naming the tool under another prefix); a name without
    the separator is passed as given."""
    server, sep, tool = name.partition(IDENTITY_SEP)
    return ToolRef(server, tool) if sep and server and tool else name
