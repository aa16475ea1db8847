"""The engine's compiled grammars, kept per party: llama.cpp's checked grammars and llguidance's matchers.

Every grammar a generation uses is compiled by llama.cpp (its parser is the authority, and its sampler the
fallback) and, on the fast path, by llguidance into a matcher against the model's vocabulary
(``token_masks``).
Both are remembered per party (``party_lru``), never shared by grammar text: a principal flooding distinct
grammars or schemas evicts only its own (a recompile then runs in its own turn of the model, not another's),
and no principal gets a faster answer, or a remembered refusal, because someone else sent the same grammar.
The shipped grammars are compiled once per party that uses them.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from sentinel_mcp.llm.party_lru import PartyLru
from sentinel_mcp.llm.token_masks import MaskCompiler, UnsupportedGrammar, build_tokenizer

# every shipped grammar (6) and a couple of a caller's schemas per party; llguidance's compiled matchers are
# the bulk of the memory, so at most PER_PARTY * PARTIES of them (256; the shared cache held 64)
PER_PARTY = 8
PARTIES = 32


def grammar_key(text: str) -> str:
    """Entries are found by a digest: a 64 KB schema's grammar is not kept twice as a key."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class GrammarCache:
    def __init__(self, per_party: int = PER_PARTY, parties: int = PARTIES) -> None:
        self.per_party, self.parties = per_party, parties
        self._llama: PartyLru[Any] = PartyLru(per_party, parties)  # grammar text -> LlamaGrammar
        self.masks: MaskCompiler | None = None  # llguidance, built on the first constrained call
        self.masks_unavailable: str | None = None
        self.tokenizer_seconds: float | None = None

    def llama_grammar(self, check: Callable[[str, str], None], party: str, text: str, label: str) -> Any:
        """``party``'s llama.cpp grammar for ``text``, checked by llama.cpp's parser through ``check`` (text,
        label: GrammarError if it refuses it; a refused grammar is not remembered). The check starts the
        grammar, whose first stacks alone can take minutes (``grammar_process``): it runs in the engine's
        bounded grammar process, never in the gateway."""
        key = grammar_key(text)
        grammar = self._llama.get(party, key)
        if grammar is not None:
            return grammar
        from llama_cpp import LlamaGrammar

        check(text, label)
        grammar = LlamaGrammar.from_string(text, verbose=False)
        self._llama.put(party, key, grammar)
        return grammar

    def mask_compiler(self, llm: Any) -> MaskCompiler:
        """llguidance's view of the model's vocabulary (built once a model; UnsupportedGrammar without it)."""
        if self.masks is None:
            if self.masks_unavailable:
                raise UnsupportedGrammar(self.masks_unavailable)
            t0 = time.perf_counter()
            try:
                self.masks = MaskCompiler(build_tokenizer(llm), self.per_party, self.parties)
            except UnsupportedGrammar as exc:
                self.masks_unavailable = str(exc)
                raise
            self.tokenizer_seconds = time.perf_counter() - t0
        return self.masks

    def matcher(self, llm: Any, party: str, gbnf: str, json_schema: dict[str, Any] | None) -> Any:
        """A fresh llguidance matcher from ``party``'s compiled ones (UnsupportedGrammar if it cannot be)."""
        masks = self.mask_compiler(llm)
        if json_schema is not None:
            return masks.for_json_schema(party, json_schema)
        return masks.for_gbnf(party, gbnf)

    def held(self, party: str) -> int:
        """How many llama.cpp grammars ``party`` has compiled and kept."""
        return self._llama.held(party)

    def matchers_held(self, party: str) -> int:
        """How many llguidance matchers (and refusals) ``party`` has kept."""
        return self.masks.held(party) if self.masks is not None else 0
