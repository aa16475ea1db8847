"""The one way a part of the swarm's record on a server store is signed and checked: a part is some columns
of a row, signed (the cluster's key "swarm build", a purpose per part) in the statement that writes them, and
withheld when read back without that signature.

A build's plan, report, counters, error and the running counts of its steps and model calls
(``build_progress.py``), each step's record and each model call's row (``state.py``) are parts. A build's
parts are signed at their first values when its row is made: a part put back to them in SQL (counts to 0, the
signature cleared) is not "nothing written yet" but unsigned. One that fails its check has its columns
withheld (``None``) and named in the row's ``unverified`` (as a task dict names them: plan, issues,
model_calls, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from sentinel_mcp.storage.row_signature import sign_row, signed_row


@dataclass(frozen=True)
class Part:
    """``name``: what it is said as (``unverified``) and signed as (``swarm build <name>``); ``ids``: the
    columns naming the row it belongs to (signed with it, so a signature moved to another row fails);
    ``columns``: what it covers; ``defaults``: its first values, signed when the row is made (None: a row
    written whole);
    ``shown``: the columns a failed check withholds (default: ``columns``)."""

    name: str
    mac_column: str
    ids: tuple[str, ...]
    columns: tuple[str, ...]
    defaults: tuple[Any, ...] | None = None
    shown: tuple[str, ...] = ()

    @property
    def purpose(self) -> str:
        return f"swarm build {self.name}"

    @property
    def withheld(self) -> tuple[str, ...]:
        return self.shown or self.columns


def mac(key: bytes, part: Part, ids: Sequence[Any], values: Sequence[Any]) -> str:
    assert len(ids) == len(part.ids) and len(values) == len(part.columns), part.name
    # text as the database hands it back: a str subclass (``Marked``, an error built from outside text) as str
    return sign_row(key, part.purpose, [str(v) if isinstance(v, str) else v for v in (*ids, *values)])


def holds(key: bytes, part: Part, row: Mapping[str, Any]) -> bool:
    """Whether the row (read whole: a mapping of its columns) carries its part's signature."""
    values = tuple(row.get(c) for c in part.columns)
    return signed_row(key, row.get(part.mac_column), part.purpose, (*(row.get(c) for c in part.ids), *values))


def checked(key: bytes, parts: Sequence[Part], row: Mapping[str, Any]) -> dict[str, Any]:
    """The row with each part that fails its check withheld (its shown columns None) and named in
    ``unverified`` (as a task dict names them, ``_json`` dropped); the MAC columns dropped."""
    out = dict(row)
    unverified: list[str] = list(out.get("unverified") or [])
    for part in parts:
        if not holds(key, part, row):
            for column in part.withheld:
                out[column] = None
            unverified += [c.removesuffix("_json") for c in part.withheld]
    for part in parts:
        out.pop(part.mac_column, None)
    if unverified:
        out["unverified"] = unverified
    return out
