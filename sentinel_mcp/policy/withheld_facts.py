"""What a principal's own look into the policy may not show: facts read from tools outside its reach, and
facts read from personal data it has no consent for.

The policy may fetch from any read tool to decide a call (the guard's own fetches), including one the caller
may not call itself or one that reads personal data (messages, contacts, ...): those facts stay inside
Sentinel. A client's ``sentinel_query``, ``sentinel_facts``, ``sentinel_why_not`` and ``sentinel_bind`` run
for its principal: the facts that came from such tools (and every fact of the same predicate, whatever its
source) are left out of what the client's goal can see, such fetches are not made on the client's behalf (a
tool outside its reach is reported as not reachable), a proof that would show them is withheld, and a bind
whose check may rest on them is refused alike whether they exist or not (``PolicyService.bind``). For
personal data, the consent gate's standing consents lift it (``sentinel-mcp consent grant``); reach is the
config's (``principals[].tools`` / ``upstreams``). The CLI, run by the device owner, sees everything.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterable

from sentinel_mcp.policy.fact_rows import Fact, string_values

# what a principal's look leaves out: (predicates, tools whose fetch markers, texts of single facts); the last
# are the facts of guarded reads it may not make (``read_guards.py``)
Hidden = tuple[frozenset[str], frozenset[str], frozenset[str]]
NOTHING_HIDDEN: Hidden = (frozenset(), frozenset(), frozenset())
WithheldFn = Callable[[str, str], "str | None"]  # (tool, principal) -> the personal kind withheld, or None
ReachFn = Callable[[str], bool]  # tool -> whether the principal may call it itself (``caller_reach.py``)

WITHHELD_PROOF = {
    "withheld": "this proof may rest on facts the caller may not see (personal data it has no consent for, "
                "read by a tool outside its reach, or by a read its rulebase does not let it make)"
}
WITHHELD_WHY = (
    "what this call would need rests on facts the caller may not see (personal data it has no consent for, "
    "read by a tool outside its reach, or by a read its rulebase does not let it make); call the tool itself "
    "to be told why"
)
MIN_UNSEEN = 3  # shorter strings ('', 'NY', ...) are too common to tell anything, or to be found by chance
# what a recorded decision told its own caller when it was made (the questions it asked, what was unmet) and
# the rulebase version the record names anyway: not withheld with the proof
TOLD_KEYS = ("rulebase", "questions", "unmet")


class Withholding:
    def __init__(self, withheld: WithheldFn | None, principal: str, reaches: ReachFn | None = None) -> None:
        self._withheld = withheld
        self._reaches = reaches
        self.principal = principal
        self._kinds: dict[str, str | None] = {}
        self._reach: dict[str, bool] = {}

    def kind(self, tool: str | None) -> str | None:
        """The personal kind ``tool`` reads that this principal has no consent for (None: none)."""
        if not tool or self._withheld is None:
            return None
        if tool not in self._kinds:
            self._kinds[tool] = self._withheld(tool, self.principal)
        return self._kinds[tool]

    def reachable(self, tool: str | None) -> bool:
        """Whether this principal may call ``tool`` itself (a fact with no source tool is nobody's read)."""
        if not tool or self._reaches is None:
            return True
        if tool not in self._reach:
            self._reach[tool] = bool(self._reaches(tool))
        return self._reach[tool]

    def withholds(self, tool: str | None) -> bool:
        """Whether facts read from ``tool`` are kept from this principal."""
        return bool(tool) and (not self.reachable(tool) or self.kind(tool) is not None)

    def fetch_refusal(self, tool: str) -> str | None:
        """Why the solver may not fetch from ``tool`` for this principal's own query (None: it may)."""
        if not self.reachable(tool):
            return f"{tool} is not reachable by this caller"
        kind = self.kind(tool)
        if kind is None:
            return None
        return (
            f"{tool} reads personal data ({kind.replace('_', ' ')}) that this caller has no consent for; "
            "call the tool itself to be asked"
        )

    def hidden(self, facts: list[Fact], unread: frozenset[str] = frozenset()) -> Hidden:
        """What to leave out: every predicate a withheld tool yielded, its fetch markers, and ``unread`` (the
        facts of guarded reads this principal may not make, ``CallerReads.hidden``)."""
        tools = frozenset(f.source_tool for f in facts if f.source_tool and self.withholds(f.source_tool))
        preds = frozenset(f.predicate for f in facts if f.source_tool in tools and not f.internal)
        return preds, tools, unread

    @staticmethod
    def shows(fact: Fact, hidden: Hidden) -> bool:
        preds, tools, unread = hidden
        return fact.predicate not in preds and fact.source_tool not in tools and fact.fact not in unread

    @staticmethod
    def proof(proof: Any, hidden: Hidden) -> Any:
        """A proof is shown whole or not at all: one that may rest on withheld facts is replaced by a note."""
        if not any(hidden):
            return proof
        return dict(WITHHELD_PROOF)

    def rests_on_withheld(
        self, recorded: dict[str, Any], hidden: Hidden, bindings: Iterable[tuple[str, str]],
        guarded: Callable[[str], bool] = lambda tool: False,
    ) -> bool:
        """Whether a recorded proof may rest on facts withheld from this principal: ``proof``'s own test (the
        session holds some), or, since a record outlives its facts, the record fetched from a withheld tool or
        names a predicate that a withheld tool's binding (predicate, tool) yields. A guarded read
        (``guarded``: its rulebase guards it) counts as withheld here: a record does not say whose data its
        facts were."""
        if any(hidden):
            return True

        def kept(tool: str) -> bool:
            return self.withholds(tool) or guarded(tool)

        fetches = recorded.get("fetches")
        if isinstance(fetches, list) and any(
            isinstance(f, dict) and kept(str(f.get("tool") or "")) for f in fetches
        ):
            return True
        preds = {p for p, tool in bindings if kept(tool)}
        # a string that merely mentions one errs on the side of withholding
        shown = json.dumps({k: v for k, v in recorded.items() if k not in TOLD_KEYS}, default=str)
        return any(f"{p}(" in shown for p in preds)


def unseen_values(facts: list[Fact], hidden: Hidden, given: Any) -> frozenset[str]:
    """The strings only facts withheld from the caller hold: in none it sees, nor in what it gave (``given``);
    Sentinel's bookkeeping facts (fetch markers: tool and predicate names) count as seen."""
    if not any(hidden):
        return frozenset()
    seen, kept = string_values(given), set()
    for f in facts:
        if f.internal or Withholding.shows(f, hidden):
            seen |= string_values(f.args)
        else:
            kept |= string_values(f.args)
    return frozenset(v for v in kept - seen if len(v) >= MIN_UNSEEN)


def tells_unseen(out: Any, unseen: frozenset[str]) -> bool:
    """Whether ``out`` (what a look would say) holds one of ``unseen`` as a word of its own, in its texts as
    they read (not JSON-escaped: a value with an accent or a quote was never found in the escaped dump). A
    value inside a longer word says nothing of it: found so, 'red' in the tool name
    'return_delivered_order_items' (or a rulebase's 'ordered by mistake') withheld the answer when another
    customer's order was red, so the answer told whether it was."""
    if not unseen:
        return False
    text = "\n".join([*string_values(out), json.dumps(out, ensure_ascii=False, default=str)])
    words = "|".join(re.escape(v) for v in sorted(unseen, key=len, reverse=True))  # one pass of the text
    return re.search(rf"(?<!\w)(?:{words})(?!\w)", text) is not None
