"""What a guard decides about one tool call: Allow, Deny or Ask. Decisions are data (DESIGN §1)."""

from __future__ import annotations

import contextlib
import hashlib
import json
from typing import TYPE_CHECKING, Any, AsyncContextManager, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field, field_validator

from sentinel_mcp.core.json_numbers import NumberTooLarge, integral_as_int
from sentinel_mcp.core.session_facts import SessionFacts

# annotations only: importing ``mcp`` (its client and server too) was most of ``db migrate``'s start
if TYPE_CHECKING:
    from mcp_types import CallToolResult

Origin = Literal["client", "solver", "a2a", "builtin", "cli"]
Provenance = Literal["observed", "user", "agent", "seed"]


# built once: ``json.dumps`` with options builds a new encoder on every call (a digest or more per call)
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)


_ESCAPED = json.encoder.encode_basestring_ascii  # what the encoder above writes for every key and text


def _flat_canonical(arguments: dict[str, Any]) -> str | None:
    """``_CANONICAL.encode(arguments)`` for a flat object of texts, integers, booleans and nulls under text
    keys (most tool calls), character for character: the same escape function, the keys in the same order, the
    same integer text; None for anything else (the encoder writes it). About a third of the encoder's time,
    which builds itself anew on every call (every guarded call computes a digest)."""
    for k in arguments:
        if type(k) is not str:
            return None
    parts = []
    for k in sorted(arguments):
        v = arguments[k]
        t = type(v)
        if t is str:
            text = _ESCAPED(v)
        elif v is True:
            text = "true"
        elif v is False:
            text = "false"
        elif v is None:
            text = "null"
        elif t is int:
            text = int.__repr__(v)  # as the encoder (it raises alike beyond the integer text limit)
        else:
            return None
        parts.append(_ESCAPED(k) + ":" + text)
    return "{" + ",".join(parts) + "}"


def argument_digest(arguments: dict[str, Any] | None) -> str:
    """A stable digest of tool arguments: canonical JSON, sha256, all of it. It binds a confirmation, a
    continuation and an answer round to their call, so it must resist collisions: the caller writes both
    calls, and no secret is in it. Cut to 16 hex digits (64 bits), two calls of one digest took 2^32 hashes
    to find, once and for every gateway: a "yes" to the call shown ran the other
    (``tests/gateway/test_digest_collisions.py``)."""
    if not arguments and (arguments is None or type(arguments) is dict):
        return _EMPTY_DIGEST  # a tool without parameters (the text "{}", as below): hashed once
    canonical = (type(arguments) is dict and _flat_canonical(arguments)) or _CANONICAL.encode(arguments or {})
    return hashlib.sha256(canonical.encode()).hexdigest()


_EMPTY_DIGEST = hashlib.sha256(b"{}").hexdigest()


class ToolCall(BaseModel):
    """One intercepted tools/call, as the guard sees it."""

    name: str  # the name the client used (catalog name, e.g. "airline__cancel_reservation")
    server: str  # upstream name ("airline", or a built-in such as "device")
    tool: str  # the upstream's own tool name ("cancel_reservation")
    arguments: dict[str, Any] = Field(default_factory=dict)
    session_id: str = "default"
    client: str | None = None  # client name/version, or the A2A caller's identity
    principal: str | None = None  # who the call runs for (the name of the caller's principal)
    purpose: str | None = None  # why, as the client states it (_meta["sentinel/purpose"]); consents use it
    origin: Origin = "client"
    read_only: bool | None = None  # from MCP annotations (readOnlyHint)
    destructive: bool | None = None  # from MCP annotations (destructiveHint, default true per spec)
    depth: int = 0  # nesting depth for solver-initiated calls
    # The tool belongs to a built-in Sentinel mounts itself, trusted by config to confirm its own risky
    # actions
    # (it declared ``_meta["sentinel/confirms"]``); never true for a configured upstream, whatever it claims.
    self_confirming: bool = False
    # the arguments the tool itself says are secrets (``redactor.secret_arguments_of``): a question that
    # quotes the call shows their values masked (the person approving a password change reads no password)
    secret_arguments: frozenset[str] = Field(default_factory=frozenset, exclude=True)

    @field_validator("arguments")
    @classmethod
    def _one_form(cls, arguments: dict[str, Any]) -> dict[str, Any]:
        """Every guard decides on the numbers the upstream gets (``core/json_numbers.py``): a principal's
        look at a read (``read_guards.looked_call``) as much as a call; the gateway refuses a call past the
        bound before it gets here, and a look's fetch is such a call."""
        try:
            return integral_as_int(arguments)  # type: ignore[no-any-return]
        except NumberTooLarge:
            return arguments

    @property
    def digest(self) -> str:
        return argument_digest(self.arguments)

    @property
    def identity(self) -> str:
        """``<server>__<tool>``: what rules and allow lists bind to, whatever name exposed the tool."""
        return f"{self.server}__{self.tool}" if self.server else self.name


class Question(BaseModel):
    """One thing the user must answer before a call may proceed (an askable, or a confirmation)."""

    key: str  # stable id, safe as an input_requests key: [A-Za-z0-9_.:-]
    message: str
    # JSON Schema of the answer, as MCP elicitation wants it: a flat object of primitive properties.
    requested_schema: dict[str, Any]
    # Extra data the guard needs to record the answer (predicate, bound call digest, ...).
    meta: dict[str, Any] = Field(default_factory=dict)


class Allow(BaseModel):
    kind: Literal["allow"] = "allow"
    reason: str = "allowed"
    proof: Any = None


class Deny(BaseModel):
    kind: Literal["deny"] = "deny"
    reason: str
    unmet: list[str] = Field(default_factory=list)
    how_to_unblock: list[str] = Field(default_factory=list)
    proof: Any = None


class Ask(BaseModel):
    kind: Literal["ask"] = "ask"
    reason: str
    questions: list[Question]
    unmet: list[str] = Field(default_factory=list)


Decision = Allow | Deny | Ask


class Answer(BaseModel):
    """The user's (or agent's) reply to a Question."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None
    provenance: Provenance = "user"


@runtime_checkable
class Guard(Protocol):
    """The one interception interface of the gateway (DESIGN §1). The policy engine implements it too."""

    @property
    def version(self) -> str:
        """Version of the active policy (a content hash), written into every audit entry."""
        ...

    async def decide(self, call: ToolCall) -> Decision: ...

    async def preview(self, call: ToolCall) -> Decision:
        """What ``call`` would get, asking nothing and using nothing up (a confirmation stays unused): a
        principal's side of a call made on its behalf (``gateway/call_preview.py``). A guard that cannot tell
        without deciding for real denies (fail closed)."""
        return Deny(reason="this guard cannot decide a call without making it", unmet=["preview"])

    async def recheck(self, call: ToolCall) -> Decision:
        """``preview`` of a call about to be carried out on an earlier decision (the continuation of a call
        whose upstream asked for input): what a write can change is read again first, as for a decision."""
        return await self.preview(call)

    async def record_answer(self, call: ToolCall, question: Question, answer: Answer) -> None:
        """Store an answer so that the next decide() of the same call sees it."""
        ...

    # The rest of the protocol has defaults: a guard that subclasses Guard states only what it does. The
    # gateway
    # calls every one of them (no probing for what a guard happens to have).
    problem: str | None = None  # why the guard cannot govern now (every call is then denied), or None

    def join_cluster(self, replica: str, key: bytes | None = None) -> None:
        """This process is replica ``replica`` of a cluster sharing one store (policy versions follow the
        cluster; ``key`` signs the versions it publishes)."""
        return None

    @property
    def cluster_problem(self) -> str | None:
        """A policy version shared by other replicas that this one could not load (it keeps its own), or None.
        """
        return None

    @property
    def reload_problem(self) -> str | None:
        """A reload of the policy that failed (the last good one stays in charge, and says so), or None."""
        return None

    async def start(self) -> None:
        """Load what deciding needs (rulebases, stores); awaited once before the gateway serves."""
        return None

    async def close(self) -> None:
        """Release what ``start`` took; awaited once at shutdown, even after a failed start."""
        return None

    async def observe(self, call: ToolCall, result: CallToolResult) -> None:
        """Learn from the result of a forwarded call (facts for later decisions); errors are logged only."""
        return None

    async def observe_unknown(self, call: ToolCall) -> None:
        """A forwarded call whose result never came (timed out, cancelled, its connection lost): it may have
        run. Nothing learnt by default."""
        return None

    def observes(self, call: ToolCall, result: CallToolResult) -> bool:
        """Whether ``observe`` may have anything to do with this result; False lets the gateway leave it out
        (no task per call for the results that teach nothing; issue 21). A guard that keeps the default
        ``observe`` never has; one that overrides it must say, or keep this answer: always."""
        return type(self).observe is not Guard.observe

    def governed_names(self) -> set[str]:
        """Tool names the policy governs by name (the catalog keeps them from being shadowed)."""
        return set()

    def changes_facts(self, call: ToolCall) -> bool:
        """Whether the call, once run, changes what this guard knows of its session (a rulebase's effect names
        its tool): the gateway then decides no other such call of the session until this one is observed."""
        return False

    def keeps_facts(self, call: ToolCall) -> bool:
        """Whether what the call establishes holds for every conversation: such calls take turns, all."""
        return False

    def turn_keys(self, call: ToolCall) -> tuple[str, ...]:
        """The turns a ``changes_facts`` call takes across conversations, sorted: every write whose outcome
        could change what this one is decided on takes one of them too. Default: its upstream's alone."""
        return (f"server:{call.server or call.identity}",)

    def cluster_turns(self, keys: tuple[str, ...], *, wait: bool,
                      within: float) -> AsyncContextManager[str | None]:
        """The ``turn_keys`` of a ``changes_facts`` call as shared with every other process deciding on the
        same store (a cluster's replicas), held while it is decided, forwarded and observed: None while held,
        else why they were not had within ``within`` seconds (the call is then denied). ``wait`` False: tried
        once. Default: this process is alone."""
        return contextlib.nullcontext(None)

    def kept_turn(self, call: ToolCall, *, wait: bool) -> AsyncContextManager[str | None]:
        """The turn of ``keeps_facts`` calls shared with every other process deciding on the same facts (a
        cluster's replicas), entered within its ``cluster_turns`` and held while it is decided, forwarded and
        observed: None while held, else why it was not had (the call is then denied). ``wait`` False: tried
        once. Default: this process is alone."""
        return contextlib.nullcontext(None)

    async def forwarding(self, call: ToolCall) -> str | None:
        """Said by the gateway right before an allowed call is written ahead and forwarded: None to go on,
        else why not (the call is denied, never forwarded). Default: nothing to do."""
        return None

    def record_databases(self) -> list[Any]:
        """Databases a decision is recorded in besides the audit log (their health gates calls)."""
        return []

    def session_facts(self, principal: str | None = None) -> SessionFacts | None:
        """The facts this guard learnt, by session, for the console to show and revoke; None if it keeps none.
        ``principal``: whose look it is: what its own policy tools would withhold (personal data it has no
        consent for, reads of tools outside its reach) is left out here too; None: the owner at the CLI."""
        return None
