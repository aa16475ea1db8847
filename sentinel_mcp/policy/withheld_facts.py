"""What a principal's own look into the policy may not show: facts read from personal data it has no consent
for.

The policy may fetch from a tool that reads personal data (messages, contacts, ...) to decide a call: those
facts stay inside Sentinel. A client's ``sentinel_query``, ``sentinel_facts``, ``sentinel_why_not`` and
``sentinel_bind`` run for its principal: the facts that came from such tools (and every fact of the same
predicate, whatever its source) are left out of what the client's goal can see, such fetches are not made
on the client's behalf, a proof that would show them is withheld, and a bind whose check may rest on them is
refused alike whether they exist or not (``PolicyService.bind``). The consent gate's standing consents
lift it (``sentinel-mcp consent grant``); the CLI, run by the device owner, sees everything.
"""

from __future__ import annotations

from typing import Any, Callable

from sentinel_mcp.policy.fact_store import Fact

WithheldFn = Callable[[str, str], "str | None"]  # (tool, principal) -> the personal kind withheld, or None


class Withholding:
    def __init__(self, withheld: WithheldFn, principal: str) -> None:
        self._withheld = withheld
        self.principal = principal
        self._kinds: dict[str, str | None] = {}

    def kind(self, tool: str | None) -> str | None:
        if not tool:
            return None
        if tool not in self._kinds:
            self._kinds[tool] = self._withheld(tool, self.principal)
        return self._kinds[tool]

    def fetch_refusal(self, tool: str) -> str | None:
        """Why the solver may not fetch from ``tool`` for this principal's own query (None: it may)."""
        kind = self.kind(tool)
        if kind is None:
            return None
        return (
            f"{tool} reads personal data ({kind.replace('_', ' ')}) that this caller has no consent for; "
            "call the tool itself to be asked"
        )

    def hidden(self, facts: list[Fact]) -> tuple[frozenset[str], frozenset[str]]:
        """(predicates, tools) to leave out: every predicate a withheld tool yielded, and its fetch markers.
        """
        tools = frozenset(f.source_tool for f in facts if f.source_tool and self.kind(f.source_tool))
        preds = frozenset(f.predicate for f in facts if f.source_tool in tools and not f.internal)
        return preds, tools

    @staticmethod
    def shows(fact: Fact, hidden: tuple[frozenset[str], frozenset[str]]) -> bool:
        preds, tools = hidden
        return fact.predicate not in preds and fact.source_tool not in tools

    @staticmethod
    def proof(proof: Any, hidden: tuple[frozenset[str], frozenset[str]]) -> Any:
        """A proof is shown whole or not at all: one that may rest on withheld facts is replaced by a note."""
        if not hidden[0] and not hidden[1]:
            return proof
        return {"withheld": "this proof may rest on personal data the caller has no consent for"}
