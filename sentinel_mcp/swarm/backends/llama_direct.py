"""The local llama engine used directly (standalone runs: the CLI, tests), with the shipped grammars."""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.model_json import loads_model_json
from sentinel_mcp.swarm.backends.base import ErrorSink, ModelError, ModelReply, ModelRequest


class LlamaDirectBackend:
    name = "local"

    def __init__(
        self, engine: Any, grammars: Any | None = None, max_tokens: int = 1024, party: str = "builtin:swarm"
    ) -> None:
        self._engine = engine  # sentinel_mcp.llm.engine.LlamaEngine
        self.max_tokens = max_tokens
        self.party = party  # whom the engine's turns are for: a party of its own beside other callers
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

        if request.json_schema is not None:
            return await self._complete_schema(request, on_error)

        grammar = self._grammars.get(request.grammar).text if request.grammar else None
        gen_request = GenerationRequest(
            messages=[
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.full_prompt},
            ],
            max_tokens=min(request.max_tokens, self.max_tokens),
            grammar=grammar,
            grammar_label=f"{request.grammar}.gbnf",
            party=self.party,
        )
        try:
            gen = await self._engine.generate(gen_request)
        except LlmError as e:
            on_error(f"local engine: {e}")
            raise ModelError(f"local engine: {e}") from None
        data: Any = None
        if grammar is not None:
            try:
                data = loads_model_json(gen.text)  # strict: the grammar's promise is re-checked
            except (ValueError, RecursionError):  # cut off, not strict JSON, or nested past the parser (an
                data = None  # open object's grammar is recursive): the agent's parser reports it
        return ModelReply(
            text=gen.text,
            json_data=data,
            prompt_tokens=gen.prompt_tokens,
            completion_tokens=gen.completion_tokens,
            model=gen.model,
        )

    async def _complete_schema(self, request: ModelRequest, on_error: ErrorSink) -> ModelReply:
        """Through the Cortex (the llm package's in-process API): schema to grammar, decode, validate."""
        from sentinel_mcp.llm.cortex import Cortex
        from sentinel_mcp.llm.errors import InjectionDetected, LlmError

        cortex = Cortex(self._engine.settings, engine=self._engine, grammars=self._grammars)
        try:
            # the swarm wrote the prompt; the context (spec, answers, files) is checked and fenced as data
            r = await cortex.generate_with_trusted_prompt(
                request.prompt,
                request.system,
                request.context or None,
                json_schema=request.json_schema,
                max_tokens=min(request.max_tokens, self.max_tokens),
                party=self.party,
            )
        except InjectionDetected as e:  # the input was refused, the model is fine: no model error
            raise ModelError(f"local engine refused the input: {e}", input_refused=True) from None
        except LlmError as e:
            on_error(f"local engine: {e}")
            raise ModelError(f"local engine: {e}") from None
        g = r.generation
        return ModelReply(
            text=r.text,
            json_data=r.data,
            prompt_tokens=g.prompt_tokens,
            completion_tokens=g.completion_tokens,
            model=g.model,
        )

    async def aclose(self) -> None:
        return None  # the engine is shared by the process
