"""Callers' compiled schemas, remembered per party: a repeated schema is not compiled again.

Each party (principal or internal user) has its own small LRU of schema -> grammar text, and the parties
themselves are kept in an LRU of bounded size. Why per party and not one cache shared by content hash: a
shared cache lets one principal flooding distinct schemas evict every other principal's entries, and its
hits answer faster, so a principal could learn by timing that someone else had sent a given schema. Per
party, a principal only ever evicts or finds its own; the grammar text of a typical schema is a few KB, so
``per_party * parties`` entries cost little.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

PER_PARTY = 16
PARTIES = 256


class SchemaCache:
    def __init__(self, per_party: int = PER_PARTY, parties: int = PARTIES) -> None:
        self.per_party, self.parties = per_party, parties
        self._lock = threading.Lock()  # used from the compile worker thread and tests
        self._by_party: OrderedDict[str, OrderedDict[str, str]] = OrderedDict()

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
            with self._lock:
                mine = self._by_party.get(party)
                if mine is not None and key in mine:
                    mine.move_to_end(key)
                    self._by_party.move_to_end(party)
                    return mine[key]
        gbnf = compile_schema(schema)
        if key is not None:
            with self._lock:
                mine = self._by_party.get(party)
                if mine is None:
                    mine = self._by_party[party] = OrderedDict()
                    while len(self._by_party) > self.parties:
                        self._by_party.popitem(last=False)
                self._by_party.move_to_end(party)
                mine[key] = gbnf
                while len(mine) > self.per_party:
                    mine.popitem(last=False)
        return gbnf
