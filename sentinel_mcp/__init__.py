"""Sentinel: a governed MCP gateway."""

__version__ = "0.1.0"
