"""Facts a write establishes that outlive its conversation: the rulebase's ``option(kept(Name/Arity))``.

What a write did is a fact of its conversation (effect/3's ``establish``), gone with it. A rule that limits
what may be done across conversations needs more: airline.pl's one certificate per cancelled flight, where the
airline keeps no record of what a certificate was for, let a second certificate through in a new conversation
or after a restart. The facts of a kept predicate are stored once, in a scope of their own on disk, and every
conversation is loaded with them beside its own (``Knowledge``); what a write of one conversation establishes
is at once in the mirrors of the others.
"""

from __future__ import annotations

from typing import Iterable

# The store's session id of the kept facts: one no conversation has (every id the gateway issues, names by a
# label or derives from an A2A context is "<principal>/...": this one has no "/"), and one every backend can
# hold (PostgreSQL's text holds no NUL).
KEPT_SCOPE = "$kept"

_PREFIX, _SUFFIX = "kept(", ")"


def kept_predicates(options: Iterable[str]) -> frozenset[str]:
    """``name/arity`` of each ``option(kept(Name/Arity))``, from the options as the engine wrote them."""
    return frozenset(o[len(_PREFIX):-len(_SUFFIX)] for o in options
                     if o.startswith(_PREFIX) and o.endswith(_SUFFIX))


def indicator(predicate: str, args: list[object]) -> str:
    """``name/arity`` of a fact, as ``kept_predicates`` names it."""
    return f"{predicate}/{len(args)}"


def kept_names(options: Iterable[str]) -> frozenset[str]:
    """The names of the kept predicates (what a principal's look leaves out: ``policy_service.py``)."""
    return frozenset(i.rsplit("/", 1)[0] for i in kept_predicates(options))
