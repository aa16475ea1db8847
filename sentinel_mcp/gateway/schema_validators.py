"""Compiled validators of outside schemas, by the schema's digest: a catalog rebuild (an upstream's
``list_changed``, a reconnect, a pins or rulebase change) lists every tool anew, as new ``Tool`` objects with
the same schemas, and the checks keyed by the tool object (``argument_check``, ``result_check``) compiled each
one again on its next call (the metaschema check: ~1 ms for a small schema, up to ~0.7 s for the largest).
Now a schema already compiled is found by its digest (sha256 of its JSON as written: key order included, so
nothing that differs is ever shared).

Bounded: at most ``MAX_SCHEMAS`` entries, least recently used first out, and a schema whose JSON is longer
than ``MAX_SCHEMA_BYTES`` is compiled as before and never kept here (an upstream that changes its schemas on
every listing cannot fill memory through this cache). Thread-safe: compilation runs in worker threads.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any, Callable, Generic, TypeVar

T = TypeVar("T")

MAX_SCHEMAS = 512
MAX_SCHEMA_BYTES = 256 * 1024


def schema_digest(schema: Any) -> str | None:
    """The digest of ``schema``'s JSON, or None when it has none within the bound (not kept)."""
    try:
        text = json.dumps(schema, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    if len(text) > MAX_SCHEMA_BYTES:
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class CompiledSchemas(Generic[T]):
    def __init__(self, max_schemas: int = MAX_SCHEMAS) -> None:
        self.max_schemas = max_schemas
        self._kept: OrderedDict[str, T] = OrderedDict()
        self._lock = threading.Lock()
        self.compiled = 0  # compilations since the start (what the cache saved is the rest)

    def get(self, schema: Any, compile: Callable[[], T]) -> T:
        """``compile()``'s result for ``schema``: kept from an earlier one of the same digest, or compiled now
        (outside the lock: two threads may compile one schema at once; either result is the same)."""
        digest = schema_digest(schema)
        if digest is not None:
            with self._lock:
                if digest in self._kept:  # None too (a schema found unusable) is a kept answer
                    self._kept.move_to_end(digest)
                    return self._kept[digest]
        value = compile()
        self.compiled += 1
        if digest is not None:
            with self._lock:
                self._kept[digest] = value
                self._kept.move_to_end(digest)
                while len(self._kept) > self.max_schemas:
                    self._kept.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._kept)
