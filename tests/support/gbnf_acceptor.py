"""Does llama.cpp's own grammar engine accept a text? The referee for outputs of the llguidance path.

The text is fed byte by byte through the vocabulary's byte tokens (<0x00>..<0xFF>, which SPM-style
vocabularies such as the tiny test model's and gemma's carry), so the check does not depend on how
the text would be tokenized. Each byte is offered to llama.cpp's grammar sampler as the only
candidate: a refused byte gets logit -inf. At the end an end-of-generation token must be allowed,
which llama.cpp allows only when the grammar is complete.
"""

from __future__ import annotations

import ctypes
import math
import re
from typing import Any

_BYTE = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


def byte_tokens(llm: Any) -> dict[int, int]:
    import llama_cpp

    vocab = llm._model.vocab
    found: dict[int, int] = {}
    for token in range(llama_cpp.llama_vocab_n_tokens(vocab)):
        text = llama_cpp.llama_vocab_get_text(vocab, token)
        m = _BYTE.match(text.decode("utf-8", "replace")) if text else None
        if m:
            found.setdefault(int(m.group(1), 16), token)
    assert len(found) == 256, "the vocabulary has no complete set of byte tokens"
    return found


def llama_cpp_accepts(llm: Any, gbnf: str, text: str, bytes_to_tokens: dict[int, int] | None = None, *,
                      complete: bool = True) -> str | None:
    """None when llama.cpp's grammar accepts ``text`` as a complete output (or, with ``complete=False``,
    as the beginning of one), else where it stopped."""
    import llama_cpp

    table = bytes_to_tokens or byte_tokens(llm)
    vocab = llm._model.vocab
    sampler = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), b"root")
    assert sampler, "llama.cpp rejected the grammar"
    try:
        data = text.encode("utf-8")
        for i, byte in enumerate(data):
            if not _allowed(sampler, table[byte]):
                return f"byte {i} ({data[max(0, i - 20):i + 1]!r}) refused"
            llama_cpp.llama_sampler_accept(sampler, table[byte])
        if complete and not _allowed(sampler, llama_cpp.llama_vocab_eos(vocab)):
            return "the text is an incomplete output (end of generation not allowed)"
        return None
    finally:
        llama_cpp.llama_sampler_free(sampler)


def _allowed(sampler: Any, token: int) -> bool:
    import llama_cpp

    cell = (llama_cpp.llama_token_data * 1)(llama_cpp.llama_token_data(token, 0.0, 0.0))
    arr = llama_cpp.llama_token_data_array(cell, 1, -1, False)
    llama_cpp.llama_sampler_apply(sampler, ctypes.byref(arr))
    return not math.isinf(cell[0].logit)
