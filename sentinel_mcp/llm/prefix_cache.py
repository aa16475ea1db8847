"""Prompt prefixes kept as KV-cache snapshots, per party, so a party's calls that share a preamble skip
evaluating it.

Every risk rating, every agent step, every swarm critic call starts with the same system prompt
(and grammar instructions); only the user turn changes. The model's context holds one sequence,
so alternating kinds of calls would evict each other's preamble. This cache keeps a snapshot of
the KV cells of each recent preamble (llama.cpp's per-sequence state, a few MB for a small model),
restores the longest one that the new prompt starts with, and evaluates only the rest. What the
context still holds from the previous call is reused as well (llama-cpp-python's own prefix match).

Both kinds of reuse are a party's own (a principal, or an internal user such as ``builtin:agent``): a caller
sets ``llm_generate``'s system prompt, and a reuse shows (in ``cached_prompt_tokens``, in the status, in the
speed), so a snapshot or a context another party left would tell the caller which preamble that party sent.
Each party keeps its own snapshots (``per_party`` and ``max_bytes // parties`` bytes at most, its own least
recently used out: a flood evicts only the flooder's); the ``parties`` most recently active keep theirs. The
context is reused only when the party that filled it asks next; for anyone else it is emptied first.
"""

from __future__ import annotations

import ctypes
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MIN_PREFIX_TOKENS = 8  # shorter preambles are not worth a snapshot
SEQ = 0
# agent steps, risk ratings, a swarm's critic and a caller's own system prompt or two; with the default
# 256 MB, 16 MB a party (gemma-3-270m's KV cells are about 18 KB a token)
PER_PARTY = 4
PARTIES = 16


@dataclass
class _Snapshot:
    tokens: tuple[int, ...]
    state: Any  # ctypes uint8 array, handed to llama.cpp as is
    size: int


@dataclass
class _Party:
    snapshots: OrderedDict[tuple[int, ...], _Snapshot] = field(default_factory=OrderedDict)
    bytes: int = 0
    hits: int = 0


@dataclass
class PromptLoad:
    reused: int  # prompt tokens not evaluated (restored from the party's snapshot or its own context)
    from_snapshot: bool


class PrefixCache:
    def __init__(self, max_bytes: int, per_party: int = PER_PARTY, parties: int = PARTIES) -> None:
        if per_party < 1 or parties < 1:
            raise ValueError("a prefix cache holds at least one snapshot of one party")
        self.max_bytes = max_bytes  # all parties together
        self.max_party_bytes = max_bytes // parties
        self.per_party, self.parties = per_party, parties
        self._lock = threading.Lock()  # loads run in the model's turn; the status is read from other threads
        self._by_party: OrderedDict[str, _Party] = OrderedDict()
        self._holder: str | None = None  # whose tokens the context holds
        self.hits = 0  # engine-wide, for the operator and benchmarks
        self.saved = 0

    @property
    def enabled(self) -> bool:
        return self.max_bytes > 0

    @property
    def bytes(self) -> int:
        with self._lock:
            return sum(p.bytes for p in self._by_party.values())

    def __len__(self) -> int:
        with self._lock:
            return sum(len(p.snapshots) for p in self._by_party.values())

    def held(self, party: str) -> int:
        """How many snapshots ``party`` has."""
        with self._lock:
            mine = self._by_party.get(party)
            return len(mine.snapshots) if mine else 0

    def party_bytes(self, party: str) -> int:
        with self._lock:
            mine = self._by_party.get(party)
            return mine.bytes if mine else 0

    def party_hits(self, party: str) -> int:
        with self._lock:
            mine = self._by_party.get(party)
            return mine.hits if mine else 0

    def holds_context_of(self, party: str) -> bool:
        """Whether the model's context holds ``party``'s tokens (another party's are not its to see)."""
        return self._holder == party

    def figures(self, party: str | None) -> dict[str, int]:
        """``party``'s snapshots, bytes and hits and its limit; the whole cache's for None (the operator)."""
        if party is None:
            return {
                "snapshots": len(self), "bytes": self.bytes, "hits": self.hits, "limit_bytes": self.max_bytes
            }
        return {
            "snapshots": self.held(party),
            "bytes": self.party_bytes(party),
            "hits": self.party_hits(party),
            "limit_bytes": self.max_party_bytes,
        }

    def clear(self) -> None:
        with self._lock:
            self._by_party.clear()
            self._holder = None

    def load(
        self,
        llm: Any,
        party: str,
        tokens: list[int],
        boundary: int | None,
        evaluate_all: bool,
        evaluate: Callable[[list[int]], None] | None = None,
    ) -> PromptLoad:
        """Bring the context to ``tokens`` (all of them, or up to ``boundary`` when not ``evaluate_all``),
        reusing only what ``party`` itself evaluated; ``evaluate`` runs the model on tokens (the engine's
        stops between batches at the generation's time limit), ``llm.eval`` when None.

        At least the last prompt token is always left to evaluate (its logits start sampling).
        """
        run = evaluate or llm.eval
        if self._holder != party:
            _truncate(llm, 0)  # another party's tokens: neither reused nor left for llama-cpp-python to match
        self._holder = party
        live = _common_prefix(llm.input_ids[: llm.n_tokens].tolist(), tokens)
        best = self._longest_snapshot(party, tokens) if self.enabled else None
        reused, from_snapshot = min(live, len(tokens) - 1), False
        if best is not None and len(best.tokens) > reused and self._restore(llm, best):
            reused, from_snapshot = len(best.tokens), True
            self._count_hit(party)
        if not from_snapshot:
            _truncate(llm, reused)
        if (self.enabled and boundary is not None and MIN_PREFIX_TOKENS <= boundary < len(tokens)
                and reused <= boundary and not self._has(party, tuple(tokens[:boundary]))):
            run(tokens[reused:boundary])
            self._save(llm, party, tuple(tokens[:boundary]))
        if evaluate_all:
            run(tokens[llm.n_tokens:])
        return PromptLoad(reused, from_snapshot)

    def _has(self, party: str, key: tuple[int, ...]) -> bool:
        with self._lock:
            mine = self._by_party.get(party)
            return mine is not None and key in mine.snapshots

    def _mine(self, party: str) -> _Party:
        """``party``'s snapshots, now the most recently active (under the lock); past the bound on parties
        the least recently active party's go."""
        mine = self._by_party.get(party)
        if mine is None:
            mine = self._by_party[party] = _Party()
            while len(self._by_party) > self.parties:
                self._by_party.popitem(last=False)
        self._by_party.move_to_end(party)
        return mine

    def _longest_snapshot(self, party: str, tokens: list[int]) -> _Snapshot | None:
        with self._lock:
            mine = self._mine(party)
            best = None
            for key, snap in mine.snapshots.items():
                n = len(key)
                if n < len(tokens) and (best is None or n > len(best.tokens)) and tuple(tokens[:n]) == key:
                    best = snap
            if best is not None:
                mine.snapshots.move_to_end(best.tokens)
            return best

    def _count_hit(self, party: str) -> None:
        with self._lock:
            self._mine(party).hits += 1
            self.hits += 1

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

    def _save(self, llm: Any, party: str, key: tuple[int, ...]) -> None:
        import llama_cpp

        ctx = llm._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, SEQ)
        if not size or size > self.max_party_bytes:
            return
        state = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, state, size, SEQ)
        if written == 0:
            return
        with self._lock:
            mine = self._mine(party)
            # the party's own least recently used go: no one else's snapshots make room for its
            while mine.snapshots and (
                mine.bytes + written > self.max_party_bytes or len(mine.snapshots) >= self.per_party
            ):
                _, old = mine.snapshots.popitem(last=False)
                mine.bytes -= old.size
            mine.snapshots[key] = _Snapshot(key, state, written)
            mine.bytes += written
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
