"""Whose tool annotations Sentinel believes.

MCP's tool annotations are hints a server gives about its own tools, and the specification says a client
must treat them as untrusted unless they come from a trusted server. Sentinel's fail-safe default lets a tool
marked ``readOnlyHint`` through without a question, and clients read the hints too (a client may run a
"read-only" tool without asking). A server that calls its destructive tool read-only would get it run unasked.

So each configured server's hints are believed only if the owner trusts it (``trust_annotations``); by
default a process Sentinel starts itself or a server on loopback is trusted, and a server beyond loopback
(someone else's service) is not. An untrusted server's tools keep their annotations' title and lose every
hint, before anything sees them: the catalog, the guard, the policy check and the pins. A tool without hints
is what MCP says it is: possibly destructive, so the fail-safe default confirms it. A rulebase's own
``read_only/1`` still counts: it is the owner's word, not the server's.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from mcp.types import Tool

from sentinel_mcp.config import RemoteServer, StdioServer, loopback_host

HINTS = ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint")


def trusts_annotations(target: Any) -> bool:
    """Whether a configured server's hints are believed (a built-in's: yes, they are Sentinel's own code)."""
    if isinstance(target, StdioServer):
        return target.trust_annotations is not False
    if isinstance(target, RemoteServer):
        if target.trust_annotations is not None:
            return target.trust_annotations
        return loopback_host(urlsplit(target.url).hostname)
    return True


def without_hints(tool: Tool) -> Tool:
    """``tool`` with no behaviour hints (its annotations' title kept)."""
    annotations = tool.annotations
    if annotations is None or all(getattr(annotations, h) is None for h in HINTS):
        return tool
    kept = annotations.model_copy(update=dict.fromkeys(HINTS))
    return tool.model_copy(update={"annotations": kept})
