"""Chooses the backend a build uses, from ``sentinel.swarm.backend`` and what the calling client offers."""

from __future__ import annotations

from typing import Any, Protocol

from sentinel_mcp.core.builtin import ToolInvoker
from sentinel_mcp.core.tool_ref import tool_ref
from sentinel_mcp.swarm.backends.base import ModelBackend, ModelError
from sentinel_mcp.swarm.backends.llm_tool import LlmToolBackend
from sentinel_mcp.swarm.backends.openai_http import OpenAIBackend
from sentinel_mcp.swarm.backends.openai_http import OpenAISettings
from sentinel_mcp.swarm.backends.sampling import SamplingBackend, client_offers_sampling


class BackendChoice(Protocol):
    """What picks a backend: ``sentinel.swarm`` and ``sentinel.agent`` both carry these three keys."""

    @property
    def backend(self) -> str: ...

    @property
    def openai(self) -> OpenAISettings: ...

    @property
    def local(self) -> Any: ...  # swarm.settings.LocalSettings: tool, model_path, max_tokens


def sampling_problem(
    session: Any, protocol_version: str | None, relayed: bool | None, wait: bool
) -> str | None:
    """Why the calling client's model cannot answer this build's requests (None: it can).

    ``relayed`` is what the gateway says about the caller (None when the swarm runs on its own and its
    session *is* the client). Requests go out during the call, so the caller must wait for the build.
    """
    from mcp.types.version import MODERN_PROTOCOL_VERSIONS

    if not wait:
        return "the client's model is asked during the call, so a build on it needs wait: true"
    if session is None or protocol_version in MODERN_PROTOCOL_VERSIONS:
        return (
            "the swarm's connection speaks 2026-07-28, which cannot carry sampling requests "
            "(mount it with a handshake-era protocol)"
        )
    if relayed is not None:
        return (
            None
            if relayed
            else (
                "the calling client does not offer sampling (its own model) through Sentinel; "
                "use a client that declares sampling, or the local or openai backend"
            )
        )
    return None if client_offers_sampling(session) else "the calling client does not offer sampling"


def choose_backend(
    settings: BackendChoice,
    *,
    session: Any = None,
    protocol_version: str | None = None,
    relayed: bool | None = None,
    wait: bool = True,
) -> str:
    """The backend name a build uses; ``auto`` prefers the calling client's model when it can be asked."""
    if settings.backend != "auto":
        return settings.backend
    return "sampling" if sampling_problem(session, protocol_version, relayed, wait) is None else "local"


def make_backend(
    settings: BackendChoice,
    *,
    call_tool: ToolInvoker | None = None,
    session: Any = None,
    protocol_version: str | None = None,
    relayed: bool | None = None,
    wait: bool = True,
    related_request_id: Any = None,
) -> ModelBackend:
    """A fresh backend for one build; ``ModelError`` says why it cannot be had."""
    name = choose_backend(
        settings, session=session, protocol_version=protocol_version, relayed=relayed, wait=wait
    )
    if name == "openai":
        return OpenAIBackend.from_env(settings.openai)
    if name == "sampling":
        problem = sampling_problem(session, protocol_version, relayed, wait)
        if problem is not None:
            raise ModelError(f"the sampling backend cannot be used: {problem}")
        return SamplingBackend(session, related_request_id)
    if call_tool is not None:  # mounted in the gateway: the llm built-in, guarded like any call
        return LlmToolBackend(call_tool, tool_ref(settings.local.tool), settings.local.max_tokens)
    from sentinel_mcp.swarm.backends.llama_direct import LlamaDirectBackend

    return LlamaDirectBackend.from_model_path(settings.local.model_path, settings.local.max_tokens)
