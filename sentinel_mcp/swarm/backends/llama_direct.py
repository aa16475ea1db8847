"""The local llama engine used directly (standalone runs: the CLI, tests), with the shipped grammars."""

from __future__ import annotations

import json
from typing import Any

from sentinel_mcp.swarm.backends.base import ErrorSink, ModelError, ModelReply, ModelRequest


class LlamaDirectBackend:
    name = "local"

    def __init__(self, engine: Any, grammars: Any | None = None, max_tokens: int = 1024) -> None:
        self._engine = engine  # sentinel_mcp.llm.engine.LlamaEngine
        self.max_tokens = max_tokens
        if grammars is None:
            from sentinel_mcp.llm.grammar_registry import GrammarRegistry
            grammars = GrammarRegistry.load(require_models=False)
        self._grammars = grammars

    @classmethod
    def from_model_path(cls, model_path: str | None, max_tokens: int = 1024,
                        **engine_settings: Any) -> LlamaDirectBackend:
        try:
            from sentinel_mcp.llm.engine import shared_engine
            from sentinel_mcp.llm.settings import LlmSettings
        except ImportError as e:
            raise ModelError(f"the local backend needs the llm built-in: {e}") from None
        return cls(shared_engine(LlmSettings(model=model_path, **engine_settings)), max_tokens=max_tokens)

    async def complete(self, request: ModelRequest, on_error: ErrorSink) -> ModelReply:
        from sentinel_mcp.llm.engine import GenerationRequest
        from sentinel_mcp.llm.errors import LlmError

        try:
            grammar = self._grammars.get(request.grammar).text if request.grammar else None
            if request.json_schema is not None:
                from sentinel_mcp.llm.schema_grammar import compile_schema
                grammar = compile_schema(request.json_schema)
            label = f"{request.grammar}.gbnf" if request.grammar else "json_schema"
            gen_request = GenerationRequest(
                messages=[{"role": "system", "content": request.system},
                          {"role": "user", "content": request.full_prompt}],
                max_tokens=min(request.max_tokens, self.max_tokens), grammar=grammar, grammar_label=label)
            gen = await self._engine.generate(gen_request)
        except LlmError as e:
            on_error(f"local engine: {e}")
            raise ModelError(f"local engine: {e}") from None
        data: Any = None
        if grammar is not None:
            try:
                data = json.loads(gen.text)
            except ValueError:
                data = None  # cut off at max_tokens: the agent's parser reports it
        return ModelReply(text=gen.text, json_data=data, prompt_tokens=gen.prompt_tokens,
                          completion_tokens=gen.completion_tokens, model=gen.model)

    async def aclose(self) -> None:
        return None  # the engine is shared by the process
