"""llama.cpp's grammar sampler used as a token mask: a grammar with no token left is an error, not an abort.

In llama-cpp-python's sampler chain the grammar marks refused tokens -inf and the next stages pick one
anyway when every token is refused; llama.cpp's grammar then throws on accepting it ("Unexpected empty grammar
stack"), across its C interface: ``std::terminate``, the process aborted. A grammar reaches such a state when
it asks for a character no token of the vocabulary writes: a caller's schema ``{"const": "\\u0000",
"format": "x"}`` (llguidance refuses the unknown format, so llama.cpp's sampler ran) asks for a NUL, which
llama.cpp never lets a token carry, and killed the gateway. Here the grammar only computes which tokens it
allows (the same ``apply`` the chain ran) into the bitmask the masked decoding loop samples from
(``masked_decoding``), and only an allowed token is ever accepted; none allowed is ``MaskError``.
"""

from __future__ import annotations

import ctypes
from typing import Any

from sentinel_mcp.llm.errors import GrammarError


class LlamaGrammarMatcher:
    """The matcher interface ``MaskedSampler`` reads (llguidance's), over a fresh llama.cpp grammar."""

    def __init__(self, llm: Any, gbnf: str, label: str) -> None:
        self._start(llm._model.vocab, llm.n_vocab(), gbnf, label)

    @classmethod
    def over(cls, vocab: Any, n: int, gbnf: str, label: str) -> LlamaGrammarMatcher:
        """The same over a bare vocabulary (``grammar_child``: no model's weights loaded)."""
        matcher = cls.__new__(cls)
        matcher._start(vocab, n, gbnf, label)
        return matcher

    def _start(self, vocab: Any, n: int, gbnf: str, label: str) -> None:
        import llama_cpp
        import numpy as np

        self._lib = llama_cpp
        self._sampler = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), b"root")
        if not self._sampler:
            raise GrammarError(
                f"{label}: llama.cpp rejected the grammar (syntax, undefined rule or left recursion)"
            )
        self._data = (llama_cpp.llama_token_data * n)()
        rows = np.ctypeslib.as_array(
            (ctypes.c_int32 * (3 * n)).from_address(ctypes.addressof(self._data))
        ).reshape(n, 3)
        self._ids, self._logits = rows[:, 0], rows.view(np.float32)[:, 1:]  # logit and p
        self._order = np.arange(n, dtype=np.int32)
        self._ids[:] = self._order
        self._array = llama_cpp.llama_token_data_array(data=self._data, size=n, selected=-1, sorted=False)
        self._n = n
        self._np = np

    def unsafe_compute_mask_ptr(self, address: int, nbytes: int) -> None:
        """Write into ``nbytes`` at ``address`` one bit per token (little-endian bit order): the grammar
        allows it next."""
        np = self._np
        self._logits[:] = 0.0
        self._array.size, self._array.selected, self._array.sorted = self._n, -1, False
        self._lib.llama_sampler_apply(self._sampler, ctypes.byref(self._array))
        if int(self._array.size) != self._n or not np.array_equal(self._ids, self._order):
            raise GrammarError("llama.cpp's grammar sampler reordered the candidates")  # not its contract
        bits = np.packbits(np.isfinite(self._logits[:, 0]), bitorder="little")
        out = np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(address))
        out[:] = 0
        out[: min(bits.size, nbytes)] = bits[:nbytes]

    def consume_token(self, token: int) -> bool:
        self._lib.llama_sampler_accept(self._sampler, token)  # only ever an allowed one (MaskedSampler)
        return True

    @staticmethod
    def is_error() -> bool:
        return False

    @staticmethod
    def get_error() -> str:
        return ""

    @staticmethod
    def is_stopped() -> bool:
        return False  # a complete grammar allows only end-of-generation tokens: the loop stops on one

    def close(self) -> None:
        if self._sampler:
            self._lib.llama_sampler_free(self._sampler)
            self._sampler = None
