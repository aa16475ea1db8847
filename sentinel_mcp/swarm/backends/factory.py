"""Chooses the backend a build uses, from ``sentinel.swarm.backend``."""

from __future__ import annotations

from typing import Any, Protocol

from sentinel_mcp.gateway.builtin import ToolInvoker
from sentinel_mcp.swarm.backends.base import ModelBackend, ModelError
from sentinel_mcp.swarm.backends.llm_tool import LlmToolBackend
from sentinel_mcp.swarm.backends.openai_http import OpenAIBackend
from sentinel_mcp.swarm.backends.sampling import SamplingBackend, client_offers_sampling
from sentinel_mcp.swarm.backends.openai_http import OpenAISettings as _OpenAISettings


class BackendChoice(Protocol):
    """What picks a backend: ``sentinel.swarm`` and ``sentinel.agent`` both carry these three keys."""

    backend: str
    openai: _OpenAISettings
    local: Any  # swarm.settings.LocalSettings: tool, model_path, max_tokens


def make_backend(settings: BackendChoice, *, call_tool: ToolInvoker | None = None, session: Any = None,
                 protocol_version: str | None = None) -> ModelBackend:
    """A fresh backend for one build; ``ModelError`` says why it cannot be had."""
    if settings.backend == "openai":
        return OpenAIBackend.from_env(settings.openai)
    if settings.backend == "sampling":
        from mcp.types.version import MODERN_PROTOCOL_VERSIONS
        if session is None or protocol_version in MODERN_PROTOCOL_VERSIONS:
            raise ModelError("the sampling backend needs a client connected with a 2025-era protocol "
                             "(2026-07-28 connections cannot carry sampling requests)")
        if not client_offers_sampling(session):
            raise ModelError("the sampling backend needs a client that offers sampling; this one does not")
        return SamplingBackend(session)
    if call_tool is not None:  # mounted in the gateway: the llm built-in, guarded like any call
        return LlmToolBackend(call_tool, settings.local.tool, settings.local.max_tokens)
    from sentinel_mcp.swarm.backends.llama_direct import LlamaDirectBackend
    return LlamaDirectBackend.from_model_path(settings.local.model_path, settings.local.max_tokens)
