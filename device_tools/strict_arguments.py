"""Tool arguments validated strictly: each in its own JSON type. Lax validation (the SDK's default) reads the
string "100" and the float 100.0 as an integer and ``true`` as 1 (a swipe from x=1, a retention of one
second); the gateway's rulebases refuse them (``integer/1``), and a built-in run on its own must too."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from pydantic import ConfigDict


def strict_arguments(mcp: MCPServer) -> None:
    """Make every tool registered on ``mcp`` so far validate its arguments strictly (call it last)."""
    for tool in mcp._tool_manager.list_tools():  # noqa: SLF001 - the SDK offers no per-server strict switch
        loose = tool.fn_metadata.arg_model
        config = ConfigDict(**{**loose.model_config, "strict": True})  # type: ignore[typeddict-item]
        tool.fn_metadata.arg_model = type(loose.__name__, (loose,), {"model_config": config,
                                                                     "__module__": loose.__module__})
