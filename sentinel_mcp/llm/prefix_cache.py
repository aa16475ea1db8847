"""Prompt prefixes kept as KV-cache snapshots, so calls that share a preamble skip evaluating it.

Every risk rating, every agent step, every swarm critic call starts with the same system prompt
(and grammar instructions); only the user turn changes. The model's context holds one sequence,
so alternating kinds of calls would evict each other's preamble. This cache keeps a snapshot of
the KV cells of each recent preamble (llama.cpp's per-sequence state, a few MB for a small model),
restores the longest one that the new prompt starts with, and evaluates only the rest. What the
context still holds from the previous call is reused as well (llama-cpp-python's own prefix match).

Snapshots are bounded by bytes (``sentinel.llm.prefix_cache_mb``), least recently used first out.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

MIN_PREFIX_TOKENS = 8  # shorter preambles are not worth a snapshot
SEQ = 0


@dataclass
class _Snapshot:
    tokens: tuple[int, ...]
    state: Any  # ctypes uint8 array, handed to llama.cpp as is
    size: int


@dataclass
class PromptLoad:
    reused: int  # prompt tokens not evaluated (restored from a snapshot or still in the context)
    from_snapshot: bool


class PrefixCache:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._snapshots: OrderedDict[tuple[int, ...], _Snapshot] = OrderedDict()
        self.bytes = 0
        self.hits = 0
        self.saved = 0

    @property
    def enabled(self) -> bool:
        return self.max_bytes > 0

    def __len__(self) -> int:
        return len(self._snapshots)

    def clear(self) -> None:
        self._snapshots.clear()
        self.bytes = 0

    def load(self, llm: Any, tokens: list[int], boundary: int | None, evaluate_all: bool) -> PromptLoad:
        """Bring the context to ``tokens`` (all of them, or up to ``boundary`` when not ``evaluate_all``).

        At least the last prompt token is always left to evaluate (its logits start sampling).
        """
        live = _common_prefix(llm.input_ids[: llm.n_tokens].tolist(), tokens)
        best = self._longest_snapshot(tokens) if self.enabled else None
        reused, from_snapshot = min(live, len(tokens) - 1), False
        if best is not None and len(best.tokens) > reused and self._restore(llm, best):
            reused, from_snapshot = len(best.tokens), True
            self.hits += 1
        if not from_snapshot:
            _truncate(llm, reused)
        if (self.enabled and boundary is not None and MIN_PREFIX_TOKENS <= boundary < len(tokens)
                and reused <= boundary and tuple(tokens[:boundary]) not in self._snapshots):
            llm.eval(tokens[reused:boundary])
            self._save(llm, tuple(tokens[:boundary]))
        if evaluate_all:
            llm.eval(tokens[llm.n_tokens:])
        return PromptLoad(reused, from_snapshot)

    def _longest_snapshot(self, tokens: list[int]) -> _Snapshot | None:
        best = None
        for key, snap in self._snapshots.items():
            n = len(key)
            if n < len(tokens) and (best is None or n > len(best.tokens)) and tuple(tokens[:n]) == key:
                best = snap
        if best is not None:
            self._snapshots.move_to_end(best.tokens)
        return best

    def _restore(self, llm: Any, snap: _Snapshot) -> bool:
        import llama_cpp

        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        if llama_cpp.llama_state_seq_set_data(llm._ctx.ctx, snap.state, snap.size, SEQ) == 0:
            llm.n_tokens = 0
            llm._ctx.kv_cache_seq_rm(-1, 0, -1)
            return False
        n = len(snap.tokens)
        llm.input_ids[:n] = snap.tokens
        llm.n_tokens = n
        llm._requires_eval = True
        return True

    def _save(self, llm: Any, key: tuple[int, ...]) -> None:
        import llama_cpp

        ctx = llm._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, SEQ)
        if not size or size > self.max_bytes:
            return
        state = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, state, size, SEQ)
        if written == 0:
            return
        while self._snapshots and self.bytes + written > self.max_bytes:
            _, old = self._snapshots.popitem(last=False)
            self.bytes -= old.size
        self._snapshots[key] = _Snapshot(key, state, written)
        self.bytes += written
        self.saved += 1


def _truncate(llm: Any, keep: int) -> None:
    """Drop everything after the first ``keep`` tokens from the context (all of it if that fails)."""
    if keep <= 0 or not llm._ctx.kv_cache_seq_rm(-1, keep, -1):
        keep = 0
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
    llm.n_tokens = keep


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
