"""One generation's clock: no caller holds the model past ``max_generation_seconds``.

A turn of the model is one generation, and round-robin only bounds how many turns others wait; the clock
bounds each turn. It is read between prompt batches (llama.cpp evaluates a batch in one call that cannot be
interrupted, so at most one batch of ``n_batch`` tokens runs past it) and once per sampled token. Past it,
free text ends marked ``time_limit``; grammar-constrained output, an incomplete derivation, is refused
(``GenerationTimedOut``): a cut prefix may still parse (a number, a closed array) and is no answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sentinel_mcp.llm.errors import GenerationCancelled, GenerationTimedOut
from sentinel_mcp.llm.model_turns import _Job

SETTING = "sentinel.llm.max_generation_seconds"
# the caller's credentials are asked again every this many sampled tokens (and before each prompt batch): a
# round trip to the event loop, about a tenth of a millisecond, against a token's milliseconds
CHECK_EVERY_TOKENS = 16


def counting(job: _Job) -> Callable[..., bool]:
    """Called once per sampled token on both decoding paths: True stops the generation (cancelled, its time
    is up, or its caller's credentials lapsed: ``job.timed_out`` and ``job.lapse`` say which)."""

    def on_token(*_args: Any) -> bool:
        job.tokens += 1
        now = time.perf_counter()
        if job.first_token_at is None:
            job.first_token_at = now
        if job.cancel.is_set():
            return True
        if now >= job.deadline:
            job.timed_out = True
            return True
        if job.tokens % CHECK_EVERY_TOKENS == 0 and not job.still_holds(f"after {job.tokens} tokens"):
            return True
        return False

    return on_token


def prompt_evaluator(llm: Any, job: _Job, total: int, seconds: float) -> Callable[[list[int]], None]:
    """``llm.eval`` a batch at a time, stopping between batches when the generation is cancelled or past
    its time limit, and before each when its caller's credentials lapsed."""

    def evaluate(tokens: list[int]) -> None:
        step = llm.n_batch
        for i in range(0, len(tokens), step):
            if not job.still_holds(f"after {llm.n_tokens} of {total} prompt tokens"):
                assert job.lapse is not None
                raise job.lapse
            llm.eval(tokens[i : i + step])
            if i + step >= len(tokens):
                return
            if job.cancel.is_set():
                raise GenerationCancelled(f"cancelled after {llm.n_tokens} of {total} prompt tokens")
            if time.perf_counter() >= job.deadline:
                raise GenerationTimedOut(
                    f"the prompt's evaluation reached the time limit of {seconds:g} s ({SETTING}) after "
                    f"{llm.n_tokens} of {total} prompt tokens; shorten the prompt or context, or raise the "
                    "limit"
                )

    return evaluate


def grammar_cut(job: _Job, label: str, seconds: float) -> GenerationTimedOut:
    """The error for grammar-constrained output stopped at the time limit."""
    return GenerationTimedOut(
        f"the generation reached its time limit of {seconds:g} s ({SETTING}) after {job.tokens} tokens "
        f"with the output of {label} incomplete; ask for less output, or raise the limit"
    )
