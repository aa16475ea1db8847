"""The fail-safe default guard (DESIGN §3): read-only tools pass, destructive or unknown ones need confirmation.

Configured allow and deny lists (glob patterns over catalog names) come first. A confirmation is bound to the
session, tool, argument digest and policy version, and expires.
"""

from __future__ import annotations

import fnmatch
import time

from sentinel_mcp.config import PolicySettings
from sentinel_mcp.gateway.decision import Allow, Answer, Ask, Decision, Deny, Question, ToolCall

CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Approve", "description": "Run this call?"}},
    "required": ["approve"],
}


def confirmation_key(call: ToolCall) -> str:
    return f"sentinel.confirm.{call.digest}"


def describe_call(call: ToolCall, limit: int = 600) -> str:
    import json

    args = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
    if len(args) > limit:
        args = args[:limit] + "…"
    return f"{call.name}({args})"


def confirmation_question(call: ToolCall, why: str) -> Question:
    return Question(
        key=confirmation_key(call),
        message=f"Sentinel: allow {describe_call(call)}? {why}",
        requested_schema=CONFIRM_SCHEMA,
        meta={"kind": "confirmation", "tool": call.name, "digest": call.digest},
    )


class ConfirmationBook:
    """Confirmations granted by the user, bound to (session, tool, digest, version), with expiry."""

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self._granted: dict[tuple[str, str, str, str], float] = {}

    def grant(self, call: ToolCall, version: str) -> None:
        self._granted[(call.session_id, call.name, call.digest, version)] = time.monotonic() + self.ttl

    def holds(self, call: ToolCall, version: str) -> bool:
        key = (call.session_id, call.name, call.digest, version)
        expiry = self._granted.get(key)
        if expiry is None:
            return False
        if expiry < time.monotonic():
            del self._granted[key]
            return False
        return True

    def consume(self, call: ToolCall, version: str) -> None:
        # one confirmation, one call: a second identical destructive call asks again
        self._granted.pop((call.session_id, call.name, call.digest, version), None)


class DefaultGuard:
    """Fail-safe: allow read-only, confirm destructive or unknown; allow/deny lists first."""

    def __init__(self, settings: PolicySettings | None = None) -> None:
        self.settings = settings or PolicySettings()
        self.confirmations = ConfirmationBook(self.settings.confirm_ttl)
        self._declined: set[tuple[str, str, str]] = set()

    @property
    def version(self) -> str:
        return f"default:{self.settings.default}"

    def _matches(self, patterns: list[str], name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in patterns)

    async def decide(self, call: ToolCall) -> Decision:
        if self._matches(self.settings.deny, call.name):
            return Deny(reason=f"{call.name} is on the deny list", unmet=["deny_list"],
                        how_to_unblock=["remove it from sentinel.policy.deny in the config"])
        if self._matches(self.settings.allow, call.name):
            return Allow(reason=f"{call.name} is on the allow list")
        mode = self.settings.default
        if mode == "allow":
            return Allow(reason="default policy: allow")
        if call.read_only and mode != "deny":
            return Allow(reason="read-only tool (fail-safe default)")
        if mode == "deny":
            return Deny(reason="default policy: deny", unmet=["allow_list"],
                        how_to_unblock=["add the tool to sentinel.policy.allow"])
        if call.self_confirming and mode == "fail-safe":
            # one question per risky action: the trusted built-in asks itself, with what it sees on the device
            return Allow(reason=f"{call.server} confirms its own risky actions (trusted built-in)")
        if (call.session_id, call.name, call.digest) in self._declined:
            self._declined.discard((call.session_id, call.name, call.digest))
            return Deny(reason="the user declined this call", unmet=["confirmation"],
                        how_to_unblock=["ask the user again and call the tool again"])
        if self.confirmations.holds(call, self.version):
            self.confirmations.consume(call, self.version)
            return Allow(reason="confirmed by the user", proof={"confirmation": confirmation_key(call)})
        why = "It may change things (destructive)." if call.destructive is not False else "It is not read-only."
        if call.read_only is None and call.destructive is None:
            why = "Its effects are unknown (no annotations)."
        return Ask(reason=f"{call.name} needs the user's confirmation: {why}",
                   questions=[confirmation_question(call, why)], unmet=["confirmation"])

    async def record_answer(self, call: ToolCall, question: Question, answer: Answer) -> None:
        if question.meta.get("kind") != "confirmation":
            return
        approved = answer.action == "accept" and bool((answer.content or {}).get("approve"))
        if approved and answer.provenance == "user":
            self.confirmations.grant(call, self.version)
        elif not approved:
            self._declined.add((call.session_id, call.name, call.digest))
