"""The consent gate: a call that reads personal data runs only with its principal's consent for that kind of
data and purpose, whatever the policy decided.

A tool declares what it reads in its ``_meta``: ``"sentinel/personal": "<kind>"`` (messages, contacts,
profile, ...), and ``"sentinel/personal_arguments": {"<argument>": "<kind>"}`` for what it reads only when
that argument is set (e.g. ``reveal_codes`` -> ``one_time_codes``: such kinds are allowed for one call at a
time, never remembered). ``"sentinel/personal_names": {"<argument>": "<kind>"}`` marks an argument that takes
a phone number or a person's name: a name is looked up in that kind of data (``device__sms_send``'s ``to`` in
the contacts), so unless the value is a phone number (``core.phone_numbers``, the rule the tool uses too) the
call needs that kind's consent, standing like ``sentinel/personal``'s. The config's ``sentinel.personal``
(``<server>__<tool>`` -> kind) marks tools that do not declare. The client states the purpose in
``_meta["sentinel/purpose"]`` (default ``unspecified``).

What a tool reads can depend on the device, not the call: the phone's screen tools show whatever app is in
front. They declare ``"sentinel/personal_screen": {"kinds": [...], "argument": "personal"}``: the gateway
tells the built-in, with each call, the kinds its caller holds consent for (``consented``), and the built-in
withholds a screen of an app whose kind is missing (``device_tools/screen_privacy.py``). A caller that wants
to see such a screen names the kinds in the declared argument (``personal=["messages"]``): those are asked
like a ``sentinel/personal`` kind, or for that call only when the declaration lists them under ``once``.

The question is the user's alone (provenance ``user``: an agent or an A2A peer cannot answer it); "allow"
alone covers this one call, "allow" and "remember" grant it until revoked (``sentinel-mcp consent revoke``).
The policy's own fetches and built-ins' internal calls are not gated (their results stay inside Sentinel).
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from sentinel_mcp.core.answer_validation import approves
from sentinel_mcp.core.call_meta import ALL_KINDS
from sentinel_mcp.gateway.consents import ANY_PURPOSE, ConsentBook
from sentinel_mcp.core.decision import Allow, Answer, Ask, Decision, Question, ToolCall
from sentinel_mcp.core.lazy_proof import rendered_proof
from sentinel_mcp.core.display_text import safe_question
from sentinel_mcp.core.phone_numbers import is_phone_number
from sentinel_mcp.core.quoted_values import readable_text

PERSONAL_META = "sentinel/personal"
PERSONAL_ARGUMENTS_META = "sentinel/personal_arguments"
PERSONAL_NAMES_META = "sentinel/personal_names"
SCREEN_META = "sentinel/personal_screen"
PURPOSE_META = "sentinel/purpose"
MAX_REQUESTED = 8  # kinds one call may ask for in its screen tool's argument
UNSPECIFIED = "unspecified"
ONCE_TTL = 300.0  # a "this call" consent waits this long for its call
GATED_ORIGINS = ("client", "a2a", "cli")

CONSENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "allow": {"type": "boolean", "title": "Allow", "description": "Allow this read?"},
        "remember": {"type": "boolean", "title": "Remember", "default": False,
                     "description": "Allow it from now on, until revoked (otherwise: this call only)"},
    },
    "required": ["allow"],
}
ONCE_SCHEMA = {"type": "object", "properties": {"allow": CONSENT_SCHEMA["properties"]["allow"]},
               "required": ["allow"]}


def purpose_of(call: ToolCall) -> str:
    """The purpose the client states (``unspecified`` without one). Its "*" states none: in the consent book
    "*" is every purpose, and a person allowing a read "(purpose: *)" grants it for this unstated one only."""
    purpose = call.purpose or UNSPECIFIED
    return UNSPECIFIED if purpose.strip() == ANY_PURPOSE else purpose


def _declared(tool: Any, identity: str, configured: dict[str, str]) -> tuple[str | None, dict[str, str]]:
    meta = getattr(tool, "meta", None) or {}
    meta = meta if isinstance(meta, dict) else {}
    kind = configured.get(identity) or meta.get(PERSONAL_META)
    by_argument = meta.get(PERSONAL_ARGUMENTS_META)
    return (str(kind) if kind else None,
            {str(a): str(k) for a, k in by_argument.items()} if isinstance(by_argument, dict) else {})


def _name_arguments(tool: Any) -> dict[str, str]:
    """``sentinel/personal_names``: argument -> the kind a name given there is looked up in."""
    meta = getattr(tool, "meta", None) or {}
    names = meta.get(PERSONAL_NAMES_META) if isinstance(meta, dict) else None
    return {str(a): str(k) for a, k in names.items() if k} if isinstance(names, dict) else {}


def once_kinds(tool: Any) -> frozenset[str]:
    """``sentinel/personal_screen``'s ``once``: the kinds allowed for one call at a time, never remembered
    (a payment card's number: seeing it is a deliberate act, as revealing a one-time code is)."""
    meta = getattr(tool, "meta", None) or {}
    decl = meta.get(SCREEN_META) if isinstance(meta, dict) else None
    once = decl.get("once") if isinstance(decl, dict) else None
    return frozenset(k for k in once if isinstance(k, str)) if isinstance(once, list) else frozenset()


def screen_kinds(tool: Any) -> tuple[list[str], str | None] | None:
    """``sentinel/personal_screen``: (the kinds the tool's screens may show, the argument that asks for some);
    None when the tool does not declare it."""
    meta = getattr(tool, "meta", None) or {}
    decl = meta.get(SCREEN_META) if isinstance(meta, dict) else None
    if not isinstance(decl, dict):
        return None
    kinds = decl.get("kinds")
    argument = decl.get("argument")
    return ([k for k in kinds if isinstance(k, str)] if isinstance(kinds, list) else [],
            argument if isinstance(argument, str) else None)


def requested_kinds(call: ToolCall, declared: tuple[list[str], str | None] | None) -> list[str]:
    """The kinds a screen tool's caller asks to see (its declared argument), among the tool's kinds."""
    if declared is None or declared[1] is None:
        return []
    value = call.arguments.get(declared[1])
    if not isinstance(value, list):
        return []
    known = set(declared[0])
    wanted = {k for k in value[: MAX_REQUESTED * 4] if isinstance(k, str) and k in known}
    return sorted(wanted)[:MAX_REQUESTED]


def personal_kinds(tool: Any, call: ToolCall, configured: dict[str, str]) -> list[tuple[str, bool]]:
    """(kind, this call only) for every kind of personal data this call would read."""
    if not getattr(tool, "meta", None) and call.identity not in configured:
        return []  # declares nothing and not configured (most tools): the four readings below all give none
    kind, by_argument = _declared(tool, call.identity, configured)
    out: list[tuple[str, bool]] = [(kind, False)] if kind else []
    once = once_kinds(tool)
    for k in requested_kinds(call, screen_kinds(tool)):
        if (k, k in once) not in out:
            out.append((k, k in once))
    for arg, k in sorted(_name_arguments(tool).items()):
        # anything but a phone number is a name the tool looks up (absent: the tool refuses the call)
        value = call.arguments.get(arg)
        if value is not None and not is_phone_number(value) and (k, False) not in out:
            out.append((k, False))
    for arg, k in sorted(by_argument.items()):
        if call.arguments.get(arg) not in (None, False, "", 0, [], {}):
            out.append((k, True))
    return out


OnceKey = tuple[str, str, str, str, str, str]  # (principal, session, identity, digest, kind, purpose)


class ConsentGate:
    def __init__(self, book: ConsentBook, configured: dict[str, str] | None = None,
                 max_once: int = 10_000) -> None:
        self.book = book
        self.configured = dict(configured or {})
        self.max_once = max_once
        # one-call consents: (principal, session, identity, digest, kind, purpose) -> expiry (monotonic)
        self._once: dict[OnceKey, float] = {}
        # each principal's one-call consents, oldest first: past ``max_once`` the principal holding the most
        # loses its oldest (oldest over all let one principal's many push out another's given a moment ago)
        self._once_of: dict[str, dict[OnceKey, None]] = {}

    def withheld_kind(self, tool: Any, identity: str, principal: str) -> str | None:
        """A kind of personal data ``tool`` may read that ``principal`` has no standing consent for (None:
        none).

        Facts the policy fetched from such a tool stay inside Sentinel for that principal: its own queries,
        summaries and proofs do not show them. Per-argument kinds are one-call kinds, never standing, so a
        tool that declares any is always withheld (its facts may have come from a call that read them)."""
        kind, by_argument = _declared(tool, identity, self.configured)
        for standing in ([kind] if kind else []) + sorted(set(_name_arguments(tool).values())):
            if self.book.current(principal, standing, UNSPECIFIED) is None:
                return standing
        return next(iter(sorted(by_argument.values())), None)

    def consented(self, call: ToolCall, tool: Any, decision: Any) -> list[str] | str | None:
        """For a tool that declares ``sentinel/personal_screen``: the kinds this call's caller may see (its
        standing consents for the purpose, and the ones this call's decision used), or ``ALL_KINDS`` for a
        call no consent gates; None for any other tool."""
        declared = screen_kinds(tool)
        if declared is None:
            return None
        if call.origin not in GATED_ORIGINS:
            return ALL_KINDS
        principal, purpose = call.principal or "", purpose_of(call)
        once = once_kinds(tool)  # never standing: only the consent this call was allowed with
        kinds = {k for k in declared[0]
                 if k not in once and self.book.current(principal, k, purpose) is not None}
        # a consent for this call only: one the gate used for a kind this call asked for (``gate`` puts the
        # consents it used in the proof; a kind the call did not name was never asked, whatever a proof says)
        asked = set(requested_kinds(call, declared))
        proof = getattr(decision, "proof", None)
        used = proof.get("consent") if isinstance(proof, dict) else None
        for entry in used if isinstance(used, list) else []:
            if isinstance(entry, dict) and entry.get("kind") in asked:
                kinds.add(entry["kind"])
        return sorted(kinds)

    def standing(self, call: ToolCall, tool: Any) -> list[str] | str | None:
        """For a tool that declares ``sentinel/personal_screen``: the kinds its caller holds a live consent
        for, for any purpose (``ALL_KINDS`` for a call no consent gates; None for any other tool). What a
        built-in keeps of a kind outside these may go for good; one held for another purpose only is not
        shown."""
        declared = screen_kinds(tool)
        if declared is None:
            return None
        if call.origin not in GATED_ORIGINS:
            return ALL_KINDS
        live = {c.kind for c in self.book.list(call.principal or "")} - once_kinds(tool)
        return sorted(k for k in declared[0] if k in live)

    def _once_key(self, call: ToolCall, kind: str) -> OnceKey:
        # the purpose too: it is the client's word, not in the arguments, and the person allowed the one shown
        return (call.principal or "", call.session_id, call.identity, call.digest, kind, purpose_of(call))

    def _has_once(self, key: OnceKey) -> bool:
        expiry = self._once.get(key)
        if expiry is not None and expiry < time.monotonic():
            self._forget_once(key)
            return False
        return expiry is not None

    def _forget_once(self, key: OnceKey) -> None:
        if self._once.pop(key, None) is None:
            return
        mine = self._once_of[key[0]]
        del mine[key]
        if not mine:
            del self._once_of[key[0]]

    def _hold_once(self, key: OnceKey, expiry: float) -> None:
        self._forget_once(key)  # given again: now the newest
        self._once[key] = expiry
        self._once_of.setdefault(key[0], {})[key] = None
        while len(self._once) > self.max_once:
            most: dict[OnceKey, None] = max(self._once_of.values(), key=len)
            self._forget_once(next(iter(most)))

    def asks(self, call: ToolCall, tool: Any) -> Ask | None:
        """The consent questions this call would need once allowed (None: none), changing nothing. The guard's
        own questions are asked together with them: a confirmation the guard uses when it allows must not be
        spent on a call the gate then stops to ask for consent (the next round would ask it again)."""
        if call.origin not in GATED_ORIGINS:
            return None
        kinds = personal_kinds(tool, call, self.configured)
        if not kinds:
            return None
        decision = self._consented(call, kinds, Allow())
        return decision if isinstance(decision, Ask) else None

    async def gate(self, call: ToolCall, tool: Any, decision: Decision) -> Decision:
        """The policy's Allow stands only with consent for each kind read; otherwise the user is asked."""
        if not isinstance(decision, Allow) or call.origin not in GATED_ORIGINS:
            return decision
        kinds = personal_kinds(tool, call, self.configured)
        if not kinds:
            return decision
        checked = self._consented(call, kinds, decision)
        if not isinstance(checked, Allow):
            return checked
        used = checked.proof
        for kind, _ in kinds:  # a one-call consent is spent by the call it allowed
            self._forget_once(self._once_key(call, kind))
        proof = await rendered_proof(decision.proof)  # the guard's proof may be rendered when read
        proof = proof if isinstance(proof, dict) else {"policy": proof}
        principal = call.principal or ""
        return Allow(
            reason=f"{decision.reason}; consent of {principal} for {', '.join(k for k, _ in kinds)}",
            proof={**proof, "consent": used},
        )

    def _consented(self, call: ToolCall, kinds: list[tuple[str, bool]], decision: Allow) -> Decision:
        """Ask for the kinds without consent; else an Allow whose proof is the consents used (nothing
        spent)."""
        principal, purpose = call.principal or "", purpose_of(call)
        missing: list[tuple[str, bool]] = []
        used: list[dict[str, Any]] = []
        for kind, once in kinds:
            key = self._once_key(call, kind)
            standing = None if once else self.book.current(principal, kind, purpose)
            if standing is not None:
                used.append(
                    {
                        "kind": kind,
                        "purpose": standing.purpose,
                        "granted_at": standing.granted_at,
                        "granted_by": standing.granted_by,
                    }
                )
            elif self._has_once(key):
                used.append({"kind": kind, "purpose": purpose, "this_call": True})
            else:
                missing.append((kind, once))
        if missing:
            questions = [self._question(call, kind, once, purpose) for kind, once in missing]
            return Ask(
                reason=f"{call.name} reads personal data ({', '.join(k for k, _ in missing)}): the user's "
                "consent is needed",
                questions=questions,
                unmet=[f"consent:{k}" for k, _ in missing],
            )
        return Allow(reason=decision.reason, proof=used)

    def _question(self, call: ToolCall, kind: str, once: bool, purpose: str) -> Question:
        # the purpose is the client's text, the principal's name and the kind come from the config or a tool:
        # each name and the purpose read as one value, as every question's values do (quoted_values.py), and
        # are shown safely (the question says which ones were changed for display)
        who = ("your MCP client" if call.principal == "owner"
               else f"the caller {readable_text(call.principal or '')}")
        why = "" if purpose == UNSPECIFIED else f" (purpose: {readable_text(purpose)})"
        tail = " For this call only." if once else " Allow for this call, or remember it until revoked."
        what = kind.replace("_", " ")
        message, _ = safe_question(
            f"Sentinel: allow {who} to read your {what} with {call.name}{why}?{tail}",
            {"caller": call.principal or "", "purpose": purpose, "kind": kind, "tool": call.name},
        )
        # keyed by the text too (as a confirmation is): the purpose is the client's word, not an argument, so
        # an answer given to "(purpose: weather)" never answers the question a call stating another asks
        shown = hashlib.sha256(message.encode()).hexdigest()  # whole: a cut digest two purposes could share
        return Question(
            key=f"sentinel.consent.{kind}.{call.digest}.{shown}",
            message=message,
            requested_schema=ONCE_SCHEMA if once else CONSENT_SCHEMA,
            meta={"kind": "consent", "consent": kind, "once": once, "purpose": purpose, "from": ["user"]},
        )

    def record(self, call: ToolCall, question: Question, answer: Answer) -> None:
        """Only the user's own JSON ``true`` to "allow" counts (``approves``: an agent's or a peer's answer, a
        string "true" or a 1 grant nothing); "remember" must be JSON ``true`` too to outlive the call."""
        if not approves(question, answer):
            return
        content = answer.content or {}
        kind, once, purpose = (
            question.meta["consent"],
            bool(question.meta.get("once")),
            question.meta["purpose"],
        )
        if content.get("remember") is True and not once:
            self.book.grant(call.principal or "", kind, purpose, by="elicitation")
            return
        self._hold_once(self._once_key(call, kind), time.monotonic() + ONCE_TTL)


def told_consents(gate: ConsentGate | None, call: ToolCall, tool: Any, decision: Any) -> dict[str, Any]:
    """What a built-in's ``call_meta`` says of its caller's consents: the kinds held for this call's purpose
    (``consented``) and for any (``standing``). No consent gate: every kind (as for sms_list, nothing is
    withheld)."""
    if gate is None:
        return {"consented": ALL_KINDS, "standing": ALL_KINDS}
    return {"consented": gate.consented(call, tool, decision), "standing": gate.standing(call, tool)}
