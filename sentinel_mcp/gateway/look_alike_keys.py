"""Argument names that read as another name: ``currency\\u200b``, ``\\u0441urrency`` (a Cyrillic es) or
``curr\\u00adency`` beside a declared ``currency``. A person, and an upstream that drops what it cannot see,
normalizes or matches names loosely, reads the declared name; the guard reads another key, and the declared
one as missing (or its default). One allow-listed definition of "reads as": the names share a confusable
skeleton (``core/look_alike_names.skeletons``: NFKC, default-ignorable and other invisible characters
removed, combining marks dropped, UTS #39's prototypes, in either case).

Only a pair with a name outside ASCII counts: two ASCII names are two names to every reader (``item_1`` and
``item_l``, ``arn`` and ``am`` are honest neighbours that a skeleton would join); the case-folding of ASCII
names is ``key_spellings``' own check."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from sentinel_mcp.core.look_alike_names import skeletons


def read_alike(names: Iterable[str], exempt: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """Two of ``names`` (distinct texts, one at least not ASCII) that read as one name, or None. Two names
    both in ``exempt`` (the names a schema declares: its author told them apart) are not a pair."""
    seen: dict[str, str] = {}
    for name in names:
        if type(name) is not str:
            continue
        for look in skeletons(name):
            other = seen.get(look)
            if other is None:
                seen[look] = name
            elif other != name and not (other.isascii() and name.isascii()) and not (
                    other in exempt and name in exempt):
                return other, name
    return None


def declared_read_as(name: str, declared: frozenset[str]) -> str | None:
    """The declared name (not ``name`` itself) that ``name``, not ASCII or read against a name that is not,
    reads as; or None."""
    looks = _looks_of(declared)
    if not looks:
        return None
    for look in skeletons(name):
        other = looks.get(look)
        if other is not None and other != name and not (other.isascii() and name.isascii()):
            return other
    return None


@functools.lru_cache(maxsize=1024)
def _looks_of(declared: frozenset[str]) -> dict[str, str]:
    """Each skeleton of the ``declared`` names, and the name (a schema's names: cached per set)."""
    looks: dict[str, str] = {}
    for name in declared:
        for look in skeletons(name):
            looks.setdefault(look, name)
    return looks
