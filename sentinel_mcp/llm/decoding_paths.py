"""The three ways a generation decodes once its prompt is ready (``engine.LlamaEngine._generate_locked``
picks one): llguidance's token masks, llama.cpp's grammar sampler as a mask in a bounded child process, or
llama-cpp-python's own completion for free text. Each restores the party's prefix, decodes under the
generation's clock and cancel flag, and ends in one ``Generation``."""

from __future__ import annotations

import time
from typing import Any

from sentinel_mcp.llm import generation_clock
from sentinel_mcp.llm.errors import GenerationCancelled, GrammarError
from sentinel_mcp.llm.generation_types import Generation
from sentinel_mcp.llm.grammar_cache import GrammarCache
from sentinel_mcp.llm.grammar_process import GrammarChild, ProcessGrammarMatcher
from sentinel_mcp.llm.masked_decoding import MaskedSampler, MaskError, SamplingParams, decode_masked
from sentinel_mcp.llm.model_turns import _Job
from sentinel_mcp.llm.prefix_cache import PrefixCache
from sentinel_mcp.llm.settings import LlmSettings


class DecodingPaths:
    """Mixed into ``LlamaEngine``, which holds what these read: its settings, caches and model."""

    settings: LlmSettings
    prefix_cache: PrefixCache
    grammar_cache: GrammarCache

    @property
    def model_name(self) -> str:
        raise NotImplementedError  # LlamaEngine's

    def _grammar_process(self) -> GrammarChild:
        raise NotImplementedError  # LlamaEngine's

    def _decode_with_masks(
        self,
        llm: Any,
        party: str,
        tokens: list[int],
        boundary: int | None,
        matcher: Any,
        params: SamplingParams,
        max_tokens: int,
        prompt: Any,
        job: _Job,
        label: str,
        sampler_name: str = "llguidance",
        reason: str | None = None,
    ) -> Generation:
        limit = self.settings.max_generation_seconds
        evaluate = generation_clock.prompt_evaluator(llm, job, len(tokens), limit)
        loaded = self.prefix_cache.load(llm, party, tokens, boundary, evaluate_all=True, evaluate=evaluate)
        masks = self.grammar_cache.masks
        vocab_size = masks.vocab_size if sampler_name == "llguidance" and masks is not None else llm.n_vocab()
        sampler = MaskedSampler(llm, matcher, params, vocab_size)
        try:
            out, finish, _stopped = decode_masked(llm, sampler, max_tokens, generation_clock.counting(job))
        finally:
            sampler.close()
        if job.lapse is not None:
            raise job.lapse
        if job.cancel.is_set():
            raise GenerationCancelled(f"generation cancelled after {job.tokens} tokens")
        if job.timed_out:
            raise generation_clock.grammar_cut(job, label, limit)
        text = llm.detokenize(out, prev_tokens=tokens).decode("utf-8", errors="ignore")
        return self._result(
            text, len(tokens), len(out), finish, prompt, job, sampler_name, reason, loaded.reused
        )

    def _decode_with_llama_grammar(
        self,
        llm: Any,
        party: str,
        tokens: list[int],
        boundary: int | None,
        gbnf: str,
        reason: str | None,
        params: SamplingParams,
        max_tokens: int,
        prompt: Any,
        job: _Job,
        label: str,
    ) -> Generation:
        """llama.cpp's grammar sampler as a mask (``llama_grammar_mask``), in a process whose every step is
        bounded (``grammar_process``): a grammar that leaves no token of the vocabulary allowed is refused
        here; in llama-cpp-python's chain it aborted the process."""
        limit = self.settings.max_generation_seconds
        matcher = ProcessGrammarMatcher(
            self._grammar_process(), gbnf, label, job, self.settings.grammar_step_seconds,
            lambda: generation_clock.grammar_cut(job, label, limit),
        )
        try:
            return self._decode_with_masks(
                llm, party, tokens, boundary, matcher, params, max_tokens, prompt, job, label,
                "llama_cpp", reason,
            )
        except MaskError as exc:
            raise GrammarError(
                f"{label}: the model cannot write what the grammar asks for after {job.tokens} tokens "
                f"({exc}; no token of its vocabulary writes it, a NUL character for one); nothing was "
                "returned"
            ) from None
        finally:
            matcher.close()

    def _decode_with_llama(
        self,
        llm: Any,
        party: str,
        tokens: list[int],
        boundary: int | None,
        params: SamplingParams,
        max_tokens: int,
        prompt: Any,
        job: _Job,
    ) -> Generation:
        """Free text (no grammar): llama-cpp-python's own completion."""
        from llama_cpp import StoppingCriteriaList

        # the context now holds only the party's own tokens: llama-cpp-python's reuse of it is the party's
        limit = self.settings.max_generation_seconds
        evaluate = generation_clock.prompt_evaluator(llm, job, len(tokens), limit)
        loaded = self.prefix_cache.load(llm, party, tokens, boundary, evaluate_all=False, evaluate=evaluate)
        # all but the last prompt token here, batch by batch under the time limit: llama-cpp-python matches
        # them as its prefix and evaluates only the last (its logits start sampling)
        evaluate(tokens[llm.n_tokens : len(tokens) - 1])
        out = llm.create_completion(
            tokens,
            max_tokens=max_tokens,
            temperature=params.temperature,
            top_p=params.top_p,
            top_k=params.top_k,
            repeat_penalty=params.repeat_penalty,
            seed=params.seed,
            stop=prompt.stop or None,
            stopping_criteria=StoppingCriteriaList([generation_clock.counting(job)]),
        )
        if job.lapse is not None:
            raise job.lapse
        if job.cancel.is_set():
            raise GenerationCancelled(f"generation cancelled after {job.tokens} tokens")
        choice, usage = out["choices"][0], out["usage"]
        finish = "time_limit" if job.timed_out else choice.get("finish_reason") or "stop"
        return self._result(choice["text"], usage["prompt_tokens"], usage["completion_tokens"], finish,
                            prompt, job, "none", None, loaded.reused)

    def _result(
        self,
        text: str,
        prompt_tokens: int,
        completion_tokens: int,
        finish: str,
        prompt: Any,
        job: _Job,
        sampler: str,
        reason: str | None,
        reused: int,
    ) -> Generation:
        return Generation(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            finish_reason=finish,
            model=self.model_name,
            prompt_format=prompt.format,
            seconds=time.perf_counter() - job.started_at,
            first_token_seconds=(job.first_token_at - job.started_at) if job.first_token_at else None,
            sampler=sampler,
            fallback_reason=reason,
            cached_prompt_tokens=reused,
        )
