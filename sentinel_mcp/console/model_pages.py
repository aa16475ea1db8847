"""Model: the local model's status (loaded model, context size, prompt/KV cache, grammar engine, the last
generation's latency and tokens per second, GPU layers), from the same source as the ``llm__llm_status`` tool
and ``/healthz`` (``llm.status.model_status``), to a principal who may call that tool. Reading it never loads
the model."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from sentinel_mcp.console.auth import Viewer
from sentinel_mcp.console.web import Console


def routes(console: Console) -> list[tuple[str, Any, list[str], bool]]:
    async def model(request: Request, viewer: Viewer) -> Response:
        if not viewer.principal.may_reach("llm", "llm_status"):  # what its MCP tool would not show it
            return console.problem(request, viewer, 404, "the local model's status is not in your reach")
        cortex = console.runtime.services.cortex
        status = None
        if cortex is not None:
            from sentinel_mcp.llm.status import model_status  # the llm built-in is optional

            # the shared facts and the viewer's own figures, as its llm_status call would show them
            status = model_status(cortex.engine, viewer.principal.name)
        return console.render(request, viewer, "model.html", model=status)

    return [("/model", model, ["GET"], False)]
