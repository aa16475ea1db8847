"""The fail-safe default guard (DESIGN §3): read-only tools pass, destructive or unknown ones need
confirmation.

Configured allow and deny lists (glob patterns over catalog names) come first. A confirmation is bound to the
session, tool, argument digest and policy version, expires, and is used by one call (``confirmation_book.py``:
in the process, or shared by replicas). Only the user's JSON
``true`` grants it; a "no" ends that call and is not remembered.
"""

from __future__ import annotations

import fnmatch
import json

from sentinel_mcp.config import PolicySettings
from sentinel_mcp.core.answer_validation import approves
from sentinel_mcp.core.asking import Asker, AskUser, Provenance, spelled_refusal
from sentinel_mcp.core.decision import Allow, Answer, Ask, Decision, Deny, Guard, Question, ToolCall
from sentinel_mcp.core.redactor import mask
from sentinel_mcp.core.display_text import (
    VALUE_LIMIT, Marked, Shown, compose, display_note, is_hidden, safe_text, shown, shown_to_approve,
)
from sentinel_mcp.policy.confirmation_book import ConfirmationBook, Confirmations

CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Approve", "description": "Run this call?"}},
    "required": ["approve"],
}


def confirmation_key(call: ToolCall) -> str:
    return f"sentinel.confirm.{call.digest}"


def describe_call(call: ToolCall, value_limit: int = VALUE_LIMIT, max_arguments: int = 30) -> tuple[str, str]:
    """The call as a person should see it (each value shown safely), and a note naming what was changed."""
    shown_args: list[str] = []
    changes: list[tuple[str, Shown]] = []
    for i, (key, value) in enumerate(sorted(call.arguments.items())):
        if i == max_arguments:
            changes.append(("the call", Shown("", 0, len(call.arguments) - max_arguments)))
            shown_args.append(f"…⟨{len(call.arguments) - max_arguments} more arguments not shown⟩")
            break
        name = shown(key, 80)
        if key in call.secret_arguments and value not in (None, "", [], {}):
            # the tool's own secret, masked as the console's card masks it (approval_arguments)
            value = "[redacted]" if isinstance(value, (dict, list)) else mask(value)
        written = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
        text = shown_to_approve(written, value_limit)
        if isinstance(value, str):  # JSON already escaped its control characters: still say they were there
            raw = sum(1 for ch in value[:value_limit] if is_hidden(ch))
            text = Shown(text.text, max(text.hidden, raw), text.cut, text.brackets, text.mixed)
        shown_args.append(f"{name.text}={text.text}")
        changes += [(f"name of argument {name.text}", name), (f"value of {name.text}", text)]
    # every piece was marked here: the whole is marked text (shown again, its marks stay as they are)
    return Marked(f"{safe_text(call.name, 200)}({', '.join(shown_args)})"), display_note(changes)


def confirmation_question(call: ToolCall, why: str) -> Question:
    return confirmation_ask(call, why).question(confirmation_key(call), CONFIRM_SCHEMA)


def confirmation_ask(call: ToolCall, why: str) -> AskUser:
    """The confirmation as asked: the secrets' own slots masked by position (``describe_call``)."""
    described, note = describe_call(call)
    return AskUser(
        Asker.GUARD,
        compose("Sentinel: allow ", described, "? ", why, Marked(f" {note}" if note else "")),
        accepts_from=(Provenance.USER,),
        meta={"kind": "confirmation", "tool": call.name, "digest": call.digest},
        # the secrets' values masked wherever the text holds them (``why`` too), not only in their slots
        values={k: call.arguments[k] for k in call.secret_arguments if k in call.arguments},
        secret=call.secret_arguments,
    )


class DefaultGuard(Guard):
    """Fail-safe: allow read-only, confirm destructive or unknown; allow/deny lists first."""

    def __init__(self, settings: PolicySettings | None = None) -> None:
        self.settings = settings or PolicySettings()
        # in this process; replicas on one database share theirs (``share_confirmations``)
        self.confirmations: Confirmations = ConfirmationBook(self.settings.confirm_ttl)

    def share_confirmations(self, book: Confirmations) -> None:
        """Keep confirmations in the replicas' shared store: given on one, used once in the cluster."""
        self.confirmations = book

    @property
    def version(self) -> str:
        return f"default:{self.settings.default}"

    def _matches(self, patterns: list[str], name: str) -> bool:
        for p in patterns:  # a loop, not ``any`` over a generator: this runs four times a call
            if fnmatch.fnmatchcase(name, p):
                return True
        return False

    async def decide(self, call: ToolCall, *, spend: bool = True) -> Decision:
        """``spend`` False: what the call would get, its confirmation left unused (``why_not``)."""
        # the deny list matches either name; the allow list only the identity (server + own name), so a
        # server exposing a tool under an allowed name gains nothing
        identity = call.identity  # built from two fields on each read: once here
        if self._matches(self.settings.deny, call.name) or self._matches(self.settings.deny, identity):
            return Deny(
                reason=f"{call.name} is on the deny list",
                unmet=["deny_list"],
                how_to_unblock=["remove it from sentinel.policy.deny in the config"],
            )
        if self._matches(self.settings.allow, identity):
            return Allow(reason=f"{call.name} is on the allow list")
        mode = self.settings.default
        if mode == "allow":
            return Allow(reason="default policy: allow")
        if call.read_only and mode != "deny":
            return Allow(reason="read-only tool (fail-safe default)")
        if mode == "deny":
            return Deny(
                reason="default policy: deny",
                unmet=["allow_list"],
                how_to_unblock=["add the tool to sentinel.policy.allow"],
            )
        if call.self_confirming and mode == "fail-safe":
            # one question per risky action: the trusted built-in asks itself, with what it sees on the device
            return Allow(reason=f"{call.server} confirms its own risky actions (trusted built-in)")
        book = self.confirmations
        if await (book.take if spend else book.held)(call, self.version):  # one confirmation, one call
            return Allow(reason="confirmed by the user", proof={"confirmation": confirmation_key(call)})
        why = (
            "It may change things (destructive)." if call.destructive is not False else "It is not read-only."
        )
        if call.read_only is None and call.destructive is None:
            why = "Its effects are unknown (no annotations)."
        ask = confirmation_ask(call, why)
        if spelled := ask.spelled_secrets():  # the text around the slot spells a secret: a mask would hide it
            return Deny(reason=spelled_refusal(call.name, spelled), unmet=["question_spells_secret"])
        return Ask(
            reason=f"{call.name} needs the user's confirmation: {why}",
            questions=[ask.question(confirmation_key(call), CONFIRM_SCHEMA)],
            unmet=["confirmation"],
        )

    async def preview(self, call: ToolCall) -> Decision:
        return await self.decide(call, spend=False)

    async def record_answer(self, call: ToolCall, question: Question, answer: Answer) -> None:
        """Grant the confirmation only for the user's JSON ``true``; a "no" stores nothing (the call ends,
        the next identical call asks again)."""
        if question.meta.get("kind") != "confirmation" or question.key != confirmation_key(call):
            return
        if approves(question, answer):  # valid, from the user, and JSON true
            await self.confirmations.grant(call, self.version)
