"""The local ``llm`` built-in, called through the gateway (guarded) as ``llm__llm_generate``.

The tool returns ``{"text", "json", "tokens": {"prompt", "completion"}, "model"}`` as structured content;
``grammar`` names a GBNF grammar (plan, critic, verifier) that keeps the output parseable.
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.builtin import ToolInvoker
from sentinel_mcp.core.model_json import ModelJsonError, loads_model_json
from sentinel_mcp.core.tool_ref import ToolRef
from sentinel_mcp.swarm.backends.base import (
    ErrorSink,
    ModelError,
    ModelReply,
    ModelRequest,
    claimed_tokens,
    estimate_tokens,
)

# how the llm built-in says its injection detector refused an input (sentinel_mcp.llm.injection)
INJECTION_REFUSAL = "looks like a prompt-injection attempt"


def _text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in (getattr(result, "content", None) or []))


class LlmToolBackend:
    name = "local"

    def __init__(self, call_tool: ToolInvoker, tool_name: str | ToolRef = ToolRef("llm", "llm_generate"),
                 max_tokens: int = 1024) -> None:
        self._call_tool = call_tool
        self.tool_name = tool_name
        self.max_tokens = max_tokens  # the llm built-in refuses more than its own sentinel.llm.max_tokens

    async def complete(self, request: ModelRequest, on_error: ErrorSink) -> ModelReply:
        args: dict[str, Any] = {"prompt": request.prompt, "system": request.system,
                                "max_tokens": min(request.max_tokens, self.max_tokens)}
        if request.context:
            args["context"] = request.context  # fenced and escaped as data by the llm built-in
        if request.json_schema is not None:
            args["json_schema"] = request.json_schema  # decoded under it, and validated, by the llm built-in
        elif request.grammar:
            args["grammar"] = request.grammar
        try:
            result = await self._call_tool(self.tool_name, args)
        except Exception as e:  # noqa: BLE001 - the gateway itself failed: a model error like any other
            on_error(f"{self.tool_name}: {type(e).__name__}: {e}")
            raise ModelError(f"{self.tool_name} failed: {type(e).__name__}: {e}") from None
        if getattr(result, "is_error", False):
            why = _text_of(result)[:300] or "error result"
            if INJECTION_REFUSAL in why:  # the input was refused, the model is fine: no model error
                raise ModelError(f"{self.tool_name} refused the input: {why}", input_refused=True)
            on_error(f"{self.tool_name}: {why}")
            raise ModelError(f"{self.tool_name} returned an error: {why}")
        data = getattr(result, "structured_content", None)
        if not isinstance(data, dict):
            try:  # strict, as a model's text (any tool may be this one): a key twice is two answers
                data = loads_model_json(_text_of(result))
            except ModelJsonError as e:
                on_error(f"{self.tool_name}: its result is not strict JSON ({e})")
                raise ModelError(f"{self.tool_name} answered JSON that is not strict JSON: {e}") from None
            except (ValueError, RecursionError):  # not JSON, or nested past the parser: the text as it is
                data = None
            if not isinstance(data, dict):  # JSON that is no object (a list, a number) is words too
                data = {"text": _text_of(result)}
        text = data.get("text") or ""
        if not isinstance(text, str):  # type-strict: a list, an object or a number is no model's words
            on_error(f"{self.tool_name}: its text is a {type(text).__name__}")
            raise ModelError(f"{self.tool_name} answered a {type(text).__name__} for its text")
        counted = data.get("tokens")
        tokens: dict[str, Any] = counted if isinstance(counted, dict) else {}
        return ModelReply(
            text=text,
            json_data=data.get("json"),
            # the built-in's word, as an endpoint's: never less than the text's own estimate
            prompt_tokens=max(claimed_tokens(tokens.get("prompt")),
                              estimate_tokens(request.system + request.full_prompt)),
            completion_tokens=max(claimed_tokens(tokens.get("completion")), estimate_tokens(text)),
            model=str(data.get("model") or "local"),
        )

    async def aclose(self) -> None:
        return None
