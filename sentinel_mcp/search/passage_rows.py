"""A passage row on a server store, signed (``storage/row_signature.py``; the cluster's key 'passages'):
whoever can write the shared database without the seal key cannot plant a memory or policy text that a
search hands to a prompt, edit one, extend its life, move it to another principal or swap its vector.

Signed: the id (drawn from the table's sequence before the insert, so the writer knows it), every column a
reader acts on (namespace, source, heading, text, lines, tags, times, embedder) and the vector's sha256. A
signed row copied to another id (a memory said twice, crowding the others out of ``keep``) or renumbered is
refused. What a MAC cannot stop: a row deleted (a memory past ``keep``) put back as it was, under its own id,
until it expires.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any, Sequence

from sentinel_mcp.storage.row_signature import sign_row, signed_row

log = logging.getLogger(__name__)

PURPOSE = "passage"
# what a verified read selects: the hit's columns (``passage_index._hit``), then embedder, vector, mac
COLUMNS = ("id, namespace, source, heading, text, line_start, line_end, tags, created_at, expires_at, "
           "embedder, vector, mac")
_LOGGED_MAX = 10_000  # refused row ids remembered so each is logged once (bounded; then logged again)


def _signed_fields(row: Sequence[Any]) -> tuple[Any, ...] | None:
    """(id as text, namespace .. expires_at, embedder, sha256 of the vector) of an insert row (no mac); None
    when the id is no integer or the vector no bytes (nothing a writer of ours made)."""
    pid, vector = row[0], row[11]
    if type(pid) is not int or not isinstance(vector, (bytes, memoryview)):
        return None
    return (str(pid), *row[1:11], hashlib.sha256(bytes(vector)).hexdigest())


def mac(key: bytes, row: Sequence[Any]) -> str:
    """The signature of an insert row (the 12 values of ``shared_index._INSERT`` before the mac: id first)."""
    fields = _signed_fields(row)
    if fields is None:
        raise TypeError("a passage row's id is an integer and its vector bytes")
    return sign_row(key, PURPOSE, fields)


class Verifier:
    """Keeps the rows a key signed, counts the others (``refused``) and logs each once."""

    def __init__(self, key: bytes) -> None:
        self.key = key
        self.refused = 0
        self._logged: set[Any] = set()

    def kept(self, rows: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """The rows (``COLUMNS``) whose mac signs them; the others refused."""
        out = []
        for row in rows:
            fields = _signed_fields(row[:12])
            if fields is not None and signed_row(self.key, row[12], PURPOSE, fields):
                out.append(row)
                continue
            self.refused += 1
            if row[0] not in self._logged:
                if len(self._logged) >= _LOGGED_MAX:
                    self._logged.clear()
                self._logged.add(row[0])
                log.warning("passage index: row %s is not signed by this cluster (written, edited or moved "
                            "outside Sentinel); never returned", row[0])
        return out
