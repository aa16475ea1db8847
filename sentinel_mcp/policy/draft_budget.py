"""The steps a draft may take: an upstream's schemas are hostile, and a few kilobytes of them (a ``$ref``
to one wide object from each of many properties, 10^5 property names one variable spelling) once expanded
to minutes or hours of drafting and hundreds of megabytes of text. Counted, never timed: the same tools
give the same draft, or the same refusal, on any machine.

Every step the drafter takes for a tool (a schema node walked, a ``$ref`` followed, a name given, a fact or
choice written) is spent from the tool's budget and the draft's: past the tool's, the tool is left out (a
TODO says so, and the default policy decides its calls); past the draft's, the draft is refused. A paragraph
of the policy searched for a tool's mention is a step of the draft's too (a long policy and many tools)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sentinel_mcp.core.errors import PolicyError

# a real tool takes some hundreds of steps (its properties, a few $ref each); a real server some 10^4
TOOL_STEPS = 20_000
DRAFT_STEPS = 1_000_000
# tools of one server: the gateway takes no more of an upstream (gateway/upstream_listing.MAX_ITEMS)
MAX_TOOLS = 5_000


class DraftTooLarge(PolicyError):
    """The tools' schemas and the policy's paragraphs take more steps to draft than any real server's."""

    exit_code = 2


class ToolTooLarge(DraftTooLarge):
    """One tool's schemas do: the tool is left out of the draft, the rest is drafted."""


class DraftBudget:
    def __init__(self, steps: int = DRAFT_STEPS) -> None:
        self.left = steps
        self._tool_left: int | None = None

    def spend(self, steps: int = 1) -> None:
        self.left -= steps
        if self.left < 0:
            raise DraftTooLarge(
                f"the tools and the policy are too large to draft: more than {DRAFT_STEPS:,} steps (a schema "
                "node, a name, a paragraph searched for a tool: no real server's take as many)"
            )
        if self._tool_left is not None:
            self._tool_left -= steps
            if self._tool_left < 0:
                raise ToolTooLarge(f"its schemas are too large to draft (more than {TOOL_STEPS:,} steps)")

    @contextmanager
    def tool(self) -> Iterator[None]:
        """While one tool is drafted: its own steps, counted in the draft's too."""
        self._tool_left = TOOL_STEPS
        try:
            yield
        finally:
            self._tool_left = None
