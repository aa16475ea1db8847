"""A fact as the fact store keeps it: the ``Fact`` model, its rows in the ``facts`` table and its string
values' rows in ``fact_values`` (the index strict symbolic mode matches arguments against), and the rows one
tool's result taught (``learned``), built straight from the engine's output.

Text goes in escaped and comes out restored, exactly (``stored_text``): a lone surrogate is kept too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable

from pydantic import BaseModel, Field

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.decision import Provenance
from sentinel_mcp.core.stored_text import restored as _back
from sentinel_mcp.core.stored_text import restored_opt
from sentinel_mcp.core.stored_text import stored as _kept
from sentinel_mcp.core.stored_text import stored_opt as _opt
from sentinel_mcp.policy.confirmed_tools import CONFIRMED


class Fact(BaseModel):
    session: str
    predicate: str
    args: list[Any]
    fact: str  # canonical Prolog text
    provenance: Provenance
    source_tool: str | None = None
    source_digest: str | None = None
    contexts: list[str] = Field(default_factory=list)
    established_at: float = Field(default_factory=process_clock.now)
    expires_at: float | None = None

    def valid_at(self, now: float) -> bool:
        # established after now: stored under a clock that was later set back, so its age is unknown
        return self.established_at <= now and (self.expires_at is None or self.expires_at > now)

    @property
    def internal(self) -> bool:
        """Bookkeeping facts (fetch markers, confirmations, contexts) start with '$'."""
        return self.predicate.startswith("$")


def string_values(value: Any) -> set[str]:
    """The strings in a JSON-like value, at any depth (what strict symbolic mode matches arguments to).
    A loop over a stack, not recursion: no depth of nesting reaches Python's recursion limit; a container met
    again (shared, or holding itself) is read once."""
    found: set[str] = set()
    seen: set[int] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            found.add(v)
        elif isinstance(v, (list, tuple, dict)) and id(v) not in seen:
            seen.add(id(v))
            stack.extend(v.values() if isinstance(v, dict) else v)
    return found


def value_rows(session: str, predicate: str, args: list[Any], fact: str) -> list[tuple[str, str, str]]:
    if predicate.startswith("$"):  # bookkeeping facts ground nothing
        return []
    s, f = _kept(session), _kept(fact)
    return [(s, _kept(v), f) for v in string_values(args)]


def fact_rows(facts: list[Fact]) -> list[tuple[Any, ...]]:
    return [
        (
            _kept(f.session),
            _kept(f.predicate),
            json.dumps(f.args),
            _kept(f.fact),
            f.provenance,
            _opt(f.source_tool),
            _opt(f.source_digest),
            json.dumps(f.contexts) if f.contexts else "[]",
            f.established_at,
            f.expires_at,
        )
        for f in facts
    ]


def argument_of(row: tuple[Any, ...]) -> bool:
    """A row of ``fact_values`` joined to its fact (value, the fact's columns): the value is one of the
    strings in a non-internal fact's arguments (``fact_values`` is an unsigned index: it claims nothing)."""
    _, _, predicate, args, *_ = row
    return not _back(predicate).startswith("$") and _back(row[0]) in string_values(json.loads(args))


def values_of(facts: list[Fact]) -> list[tuple[str, str, str]]:
    return [r for f in facts for r in value_rows(f.session, f.predicate, f.args, f.fact)]


_args_text = json.JSONEncoder(check_circular=False).encode  # what json.dumps writes (args are acyclic)


@dataclass(slots=True)
class Learned:
    """The facts one tool's result taught, as the rows the store and the engine's mirror take (what ``Fact``
    models would give through ``fact_rows``, ``values_of`` and ``Knowledge.add``, at under half the cost:
    the event loop builds these for every read a rulebase learns from; issue 21)."""

    session: str
    source_tool: str
    source_digest: str
    rows: list[tuple[Any, ...]]  # the facts table's rows
    values: list[tuple[str, str, str]]  # the fact_values table's rows
    mirror: list[tuple[str, float | None, str]]  # (fact text, expiry, provenance) for the engine
    confirmations: list[list[Any]]  # the arguments of any '$confirmed' fact among them (ConfirmedTools)
    shown: int  # how many are not bookkeeping facts


def learned(session: str, source_tool: str, source_digest: str, extracted: list[dict[str, Any]],
            now: float) -> Learned:
    """``extracted`` (the engine's facts of a result: predicate, args, canonical text, TTL), observed now."""
    s, tool, digest = _kept(session), _kept(source_tool), _kept(source_digest)
    rows: list[tuple[Any, ...]] = []
    values: list[tuple[str, str, str]] = []
    mirror: list[tuple[str, float | None, str]] = []
    confirmations: list[list[Any]] = []
    shown = 0
    for e in extracted:
        predicate, args, fact, ttl = e["predicate"], e["args"], e["fact"], e["ttl"]
        expires = None if ttl is None else now + float(ttl)
        kept = _kept(fact)
        rows.append(
            (s, _kept(predicate), _args_text(args), kept, "observed", tool, digest, "[]", now, expires)
        )
        mirror.append((fact, expires, "observed"))
        values.extend(value_rows(session, predicate, args, fact))
        if predicate == CONFIRMED:
            confirmations.append(args)
        shown += not predicate.startswith("$")  # bookkeeping facts are not shown
    return Learned(session, source_tool, source_digest, rows, values, mirror, confirmations, shown)


def row_to_fact(row: Iterable[Any]) -> Fact:
    s, p, a, f, prov, st, sd, ctx, est, exp = row
    return Fact(
        session=_back(s),
        predicate=_back(p),
        args=json.loads(a),
        fact=_back(f),
        provenance=prov,
        source_tool=restored_opt(st),
        source_digest=restored_opt(sd),
        contexts=json.loads(ctx),
        established_at=est,
        expires_at=exp,
    )
