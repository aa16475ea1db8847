"""What of a tool's result may be kept as facts: each fact within ``FACT_VALUE``'s limits, and at most
``MAX_FACTS_PER_RESULT`` (``core/record_bounds.py``).

A fact cannot be kept cut: a cut value is another value, and the guard would decide on something the upstream
never said. So a binding that yields a fact past the limits yields none from this result, and loses its
fetched marker too: its look-up failed (the facts stay unknown, a decision on them is denied, saying so),
never "looked up, nothing there". Keeping the binding's other facts would be worse than none: a guard that
reads "no leg of this reservation was flown" from the legs it was shown would pass on the legs left out.
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.record_bounds import FACT_VALUE, MAX_FACTS_PER_RESULT, within

MARKER = "$fetched"  # fact_terms.pl's fetched marker: '$fetched'(Name, Arity, Tool, json(Args))


def _binding_of(fact: dict[str, Any]) -> tuple[str, int]:
    if fact["predicate"] == MARKER and len(fact["args"]) >= 2:
        return str(fact["args"][0]), fact["args"][1]
    return str(fact["predicate"]), len(fact["args"])


# a fact whose text is this short, with this few brackets, is within the limits: its JSON is at most twelve
# characters a character of its text (an escaped astral character), and each level of nesting takes a bracket;
# told without encoding its arguments (the usual fact of every read a rulebase learns from)
_SHORT = FACT_VALUE.chars // 12


def _kept(fact: dict[str, Any]) -> bool:
    text = fact["fact"]
    if len(text) <= _SHORT and text.count("[") + text.count("(") + text.count("{") <= FACT_VALUE.depth:
        return True
    return len(text) <= 2 * FACT_VALUE.chars and within(fact["args"], FACT_VALUE)


def kept_facts(extracted: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The facts of ``extracted`` that may be kept, and the bindings left unread for a fact past the limits
    (``Name/Arity (why)``, as the engine names an unreadable binding)."""
    if len(extracted) > MAX_FACTS_PER_RESULT:  # every binding of this result, as a result too large to read
        names = sorted({_binding_of(f) for f in extracted})
        why = f"the result holds more than {MAX_FACTS_PER_RESULT} facts"
        return [], [f"{n}/{a} ({why})" for n, a in names if not n.startswith("$")]
    over = {_binding_of(f) for f in extracted if f["predicate"] != MARKER and not _kept(f)}
    if not over:
        return extracted, []
    kept = [f for f in extracted if _binding_of(f) not in over]
    why = (f"a fact is past the limits facts are kept within ({FACT_VALUE.chars} characters of JSON, "
           f"{FACT_VALUE.depth} levels)")
    return kept, [f"{n}/{a} ({why})" for n, a in sorted(over)]
