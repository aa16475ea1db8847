"""Grammar-constrained decoding with precomputed token masks (the fast path).

llama.cpp's grammar sampler checks candidate tokens one by one against the grammar, for a
262k-token vocabulary on every step. Here llguidance computes the set of allowed tokens as a
bitmask (tens of microseconds), and the sampler chain is llama.cpp's own (top-k, typical, top-p,
min-p, temperature, distribution), with one Python sampler in front that applies the repeat penalty
and, when needed, the mask:

* few tokens allowed (structure: braces, keys, enum values): the candidates are cut down to the
  allowed ones before the chain runs, which is cheaper than unconstrained sampling;
* most tokens allowed (inside strings): sample as if unconstrained and check the token's bit;
  only if the grammar refuses it, sample again with the mask applied. For plain sampling this is
  exactly the masked distribution (accepting p(t) and otherwise resampling from p/A gives p/A),
  and it is what llama.cpp's common sampler does.

The repeat penalty is applied here (to the at most ``penalty_last_n`` tokens this generation
sampled, as llama-cpp-python's penalty sampler does) because llama.cpp's penalty sampler would
also count a refused first-pass token.
"""

from __future__ import annotations

import ctypes
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from sentinel_mcp.core.errors import SentinelError
from sentinel_mcp.llm.token_masks import short_reason

# numpy comes with llama-cpp-python (the llm extra); without it no model runs at all, and the llm built-in
# must still start (a wheel installed without extras) to say how to get one. It is imported by the first
# masked generation, not when the built-in starts (0.2 to 0.3 s of the gateway's cold start, issue 21).
if TYPE_CHECKING:
    import numpy as np
else:
    np = None


def _numpy() -> Any:
    global np
    if np is None:
        import numpy

        np = numpy
    return np


SPARSE_FRACTION = 16  # at most vocab/16 tokens allowed: cut the candidates down before sampling


class MaskError(SentinelError):
    """llguidance stopped with an error mid-generation (a bug or an exhausted resource limit)."""
    area = "llm"

    def __init__(self, reason: str) -> None:
        # llguidance's error dumps its state and the caller's whole grammar or schema: the log keeps the start
        super().__init__(short_reason(reason))


class DeadEnd(MaskError):
    """The grammar allows no token of the vocabulary next (a character no token writes): no sampler can."""


class ParserRefused(MaskError):
    """llguidance's parser refused a token its mask allowed (its fault around forced bytes, seen often with a
    random-weight model's byte tokens): a fault of llguidance on this path, not a grammar past its cost
    limits."""


@dataclass(frozen=True)
class SamplingParams:
    temperature: float
    top_p: float
    top_k: int
    repeat_penalty: float
    seed: int
    min_p: float = 0.05  # llama-cpp-python's create_completion defaults
    typical_p: float = 1.0
    penalty_last_n: int = 64


class _MaskingSampler:
    """The Python stage at the head of the chain: candidates arrive in token-id order."""

    def __init__(self, penalty: float, last_n: int) -> None:
        _numpy()
        self.penalty = penalty
        self.recent: deque[int] = deque(maxlen=max(last_n, 1))
        self.keep: np.ndarray | None = None  # token ids to cut the candidates down to (sparse mask)
        self.allowed: np.ndarray | None = None  # bool per token (dense mask)

    def apply(self, cur_p: Any) -> None:
        arr = cur_p.contents
        size = int(arr.size)
        address = ctypes.cast(arr.data, ctypes.c_void_p).value
        if address is None:
            raise ValueError("llama.cpp handed over no candidate array")
        rows = np.ctypeslib.as_array((ctypes.c_int32 * (3 * size)).from_address(address)).reshape(size, 3)
        logits = rows.view(np.float32)[:, 1]
        # llama.cpp fills the array in token-id order; should that ever change, map ids to positions
        in_id_order = size > 0 and rows[0, 0] == 0 and rows[size - 1, 0] == size - 1
        position = None if in_id_order else np.argsort(rows[:, 0])
        if self.penalty != 1.0 and self.recent:
            ids = np.fromiter(set(self.recent), dtype=np.int64)
            ids = ids[ids < size] if position is None else position[ids[ids < size]]
            values = logits[ids]
            logits[ids] = np.where(values <= 0, values * self.penalty, values / self.penalty)
        if self.keep is not None:
            keep = self.keep if position is None else position[self.keep]
            n = keep.size
            rows[:n] = rows[keep]
            arr.size = n
            arr.sorted = False
        elif self.allowed is not None:
            refused = ~self.allowed[:size]
            logits[refused if position is None else position[np.flatnonzero(refused)]] = -np.inf


class MaskedSampler:
    def __init__(self, llm: Any, matcher: Any, params: SamplingParams, vocab_size: int) -> None:
        from llama_cpp import _internals

        self.llm, self.matcher = llm, matcher
        self.n_vocab = llm.n_vocab()
        self.bitmask = _numpy().zeros((max(vocab_size, self.n_vocab) + 31) // 32, dtype=np.int32)
        self.stage = _MaskingSampler(params.repeat_penalty, params.penalty_last_n)
        chain = _internals.LlamaSampler()
        chain.add_custom(self.stage.apply)
        if params.temperature < 0:
            chain.add_dist(params.seed)
        elif params.temperature == 0:
            chain.add_greedy()
        else:
            chain.add_top_k(params.top_k)
            chain.add_typical(params.typical_p, 1)
            chain.add_top_p(params.top_p, 1)
            chain.add_min_p(params.min_p, 1)
            chain.add_temp(params.temperature)
            chain.add_dist(params.seed)
        self.chain = chain
        self.resampled = 0  # first-pass tokens the grammar refused (for the benchmark)

    def close(self) -> None:
        self.chain.close()

    def next_token(self) -> int:
        """Sample the next token the grammar allows, from the logits of the last evaluated token."""
        m, stage = self.matcher, self.stage
        m.unsafe_compute_mask_ptr(self.bitmask.ctypes.data, self.bitmask.nbytes)
        if m.is_error():
            raise MaskError(m.get_error())
        bits = np.unpackbits(self.bitmask.view(np.uint8), bitorder="little")[: self.n_vocab].view(bool)
        n_allowed = int(np.count_nonzero(bits))
        if n_allowed == 0:
            raise DeadEnd("the grammar allows no token here")
        ctx = self.llm._ctx
        try:
            if n_allowed * SPARSE_FRACTION <= self.n_vocab:
                stage.keep = np.flatnonzero(bits).astype(np.int64)
                return self.chain.sample(ctx, -1)
            token = self.chain.sample(ctx, -1)
            if bits[token]:
                return token
            self.resampled += 1
            stage.allowed = bits
            return self.chain.sample(ctx, -1)
        finally:
            stage.keep = stage.allowed = None

    def commit(self, token: int) -> None:
        if not self.matcher.consume_token(token):
            error = self.matcher.get_error() or f"token {token} refused"
            # only llguidance's own inconsistency (its parser refusing what its mask allowed) is that fault;
            # a limit reached (a lexer or parser "too complex"), or anything else, stays a MaskError
            limit = "TooComplex" in str(self.matcher.stop_reason())
            fault = "doesn't satisfy the grammar" in error and not limit
            raise (ParserRefused if fault else MaskError)(error)
        self.stage.recent.append(token)


def decode_masked(llm: Any, sampler: MaskedSampler, max_tokens: int,
                  on_token: Callable[[int], bool]) -> tuple[list[int], str, bool]:
    """Sample up to ``max_tokens`` tokens after the already evaluated prompt.

    ``on_token`` is called once per sampled token and returns True to stop (cancellation).
    Returns (completion tokens, finish reason "stop" | "length", cancelled).
    """
    import llama_cpp

    vocab = llm._model.vocab
    out: list[int] = []
    matcher = sampler.matcher
    while len(out) < max_tokens:
        token = sampler.next_token()
        if on_token(token):
            return out, "stop", True
        if llama_cpp.llama_vocab_is_eog(vocab, token):
            return out, "stop", False  # only sampled when the grammar is complete
        sampler.commit(token)
        out.append(token)
        if matcher.is_stopped():
            return out, "stop", False
        llm.eval([token])
    return out, "length", False
