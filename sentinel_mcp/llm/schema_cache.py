"""Callers' compiled schemas, remembered per party: a repeated schema is not compiled again.

Each party (principal or internal user) has its own small LRU of schema -> grammar text, and the parties
themselves are kept in an LRU of bounded size (``party_lru``: why per party and not one cache shared by
content hash). The grammar text of a typical schema is a few KB, so ``per_party * parties`` entries cost
little. The engine's own compiled grammars below this are kept per party the same way (``grammar_cache``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from sentinel_mcp.llm.party_lru import PartyLru

PER_PARTY = 16
PARTIES = 256


class SchemaCache:
    def __init__(self, per_party: int = PER_PARTY, parties: int = PARTIES) -> None:
        self.per_party, self.parties = per_party, parties
        self._lru: PartyLru[str] = PartyLru(per_party, parties)

    @staticmethod
    def _key(schema: Any) -> str | None:
        try:
            text = schema if isinstance(schema, str) else json.dumps(schema, sort_keys=True)
        except (TypeError, ValueError, RecursionError):
            return None  # not JSON (or nested past the interpreter): the compiler refuses it with a reason
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def compiled(self, party: str, schema: Any, compile_schema: Callable[[Any], str]) -> str:
        """``party``'s grammar for ``schema``, compiled by ``compile_schema`` unless it has it already.
        A schema that does not compile is not remembered (its error is raised each time)."""
        key = self._key(schema)
        if key is not None:
            gbnf = self._lru.get(party, key)
            if gbnf is not None:
                return gbnf
        gbnf = compile_schema(schema)
        if key is not None:
            self._lru.put(party, key, gbnf)
        return gbnf
