"""A principal's own reads of the tools a rulebase guards (a *read guard*: a ``guard`` on a read-only tool).

The guard of a read governs what a caller reads. The client's call of the tool is decided by it; so is every
read a principal's look into the policy makes or shows for it (``sentinel_query``, ``sentinel_why_not``,
``sentinel_facts``, ``sentinel_bind``, the console's views of its sessions): a look fetches from a guarded
read only what the caller could read by calling the tool itself now, and of the facts the session holds from
guarded reads it shows only those of such reads, by the exact call they came from. The policy's own reads
(the facts a guard reads to decide a call, e.g. an order's owner, to find it is not the user's) are not
decided by the read's guard (``guard._policy_read``): their facts stay inside Sentinel.

A read is decided as the caller's call of the tool would be, asking nothing and using nothing up
(``spend=False``): one that needs an answer first, or that errs, is refused (fail closed); so are facts whose
read cannot be told (no fetch marker naming its arguments), and, past ``MAX_READS_CHECKED`` reads in one look,
the rest.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Iterable

from sentinel_mcp.core.decision import Allow, Ask, Decision, ToolCall, argument_digest
from sentinel_mcp.core.port import GatewayPort
from sentinel_mcp.core.secret_names import secret_arguments_of
from sentinel_mcp.policy.fact_store import Fact

FETCHED = "$fetched"  # the marker a read leaves per binding: '$fetched'(Name, Arity, Tool, json(Arguments))
MAX_READS_CHECKED = 64  # distinct guarded reads one look decides; the facts of any more are left out

DecideRead = Callable[
    [str, dict[str, Any]], Awaitable[Decision]
]  # (tool, arguments) -> the caller's decision


def looked_call(
    port: GatewayPort | None, tool: str, arguments: dict[str, Any], session: str, principal: str | None
) -> ToolCall:
    """The call a principal's look stands for: ``tool`` (its exposed name or its identity) with these
    arguments, in its session, as a built-in makes it for the principal (never the solver's own read)."""
    t = port.find_tool(tool) if port is not None else None
    ann = t.annotations if t else None
    server, _, own = tool.partition("__")
    ref = port.identity_of(tool) if port is not None else None
    if ref is not None:  # the tool's identity, whatever prefix exposes it (rules bind to it)
        server, own = ref.server, ref.tool
    return ToolCall(
        name=tool,
        server=server if own else "",
        tool=own or tool,
        arguments=arguments,
        session_id=session,
        principal=principal,
        origin="builtin",
        read_only=ann.read_only_hint if ann else None,
        destructive=ann.destructive_hint if ann else None,
        self_confirming=port.self_confirming(tool) if port is not None else False,
        # judged as its call is: a rule bound to it that leaks what its schema declares secret denies it
        # (``schema_secret_flows.py``), and a question spelling such a value is not asked
        secret_arguments=frozenset(secret_arguments_of(t)),
    )


class CallerReads:
    """One look's reads of guarded tools, for one principal in one session (decisions kept for the look)."""

    def __init__(self, guarded: Callable[[str], bool], decide: DecideRead) -> None:
        self._guarded = guarded  # whether a tool (by identity) has a read guard in the rulebase in force
        self._decide = decide
        self._decided: dict[tuple[str, str], str | None] = {}

    def guards(self, tool: str | None) -> bool:
        return bool(tool) and self._guarded(str(tool))

    async def refusal(self, tool: str, arguments: dict[str, Any]) -> str | None:
        """Why this caller may not read ``tool`` with ``arguments`` (None: it may, or it has no guard)."""
        if not self.guards(tool):
            return None
        key = (tool, argument_digest(arguments))
        if key not in self._decided:
            if len(self._decided) >= MAX_READS_CHECKED:
                return f"{tool}: more guarded reads than one look decides ({MAX_READS_CHECKED})"
            self._decided[key] = _refusal_of(tool, await self._decide(tool, arguments))
        return self._decided[key]

    async def hidden(self, facts: Iterable[Fact]) -> frozenset[str]:
        """The texts of the facts read by guarded reads this caller may not make (their markers too)."""
        reads: dict[tuple[str, str | None], list[Fact]] = {}
        for f in facts:
            if f.source_tool and self.guards(f.source_tool):
                reads.setdefault((f.source_tool, f.source_digest), []).append(f)
        hidden: set[str] = set()
        for (tool, digest), read in reads.items():
            arguments = _arguments_of(read, tool)
            if (
                arguments is None
                or argument_digest(arguments) != digest
                or await self.refusal(tool, arguments)
            ):
                hidden.update(f.fact for f in read)
        return frozenset(hidden)


def _refusal_of(tool: str, d: Decision) -> str | None:
    if isinstance(d, Allow):
        return None
    if isinstance(d, Ask):
        return f"{tool} needs the user's answers first for this caller; call the tool itself to be asked"
    return f"{tool} may not be read by this caller: {d.reason}"


def _arguments_of(read: list[Fact], tool: str) -> dict[str, Any] | None:
    """The arguments of the read these facts came from, as its fetch marker names them."""
    for f in read:
        if f.predicate == FETCHED and len(f.args) == 4 and f.args[2] == tool and isinstance(f.args[3], dict):
            return f.args[3]
    return None
