"""Asking a human before a risky action: MCP elicitation (both protocol eras) or Volume Up on the phone.

Elicitation, era-portable by hand (the question depends on the firewall's verdict, which a
``Resolve`` resolver could only compute by duplicating the tool):
- 2026-07-28 connections: return ``InputRequiredResult`` with one form question under
  ``device_confirm`` and the action digest in ``request_state`` (MCPServer seals it); the client
  answers and retries the same call, and the answer only counts for the same action digest.
- 2025 and older: push ``elicitation/create`` with ``ctx.elicit``; no answer within the timeout denies.
  (On 2026 connections an answer that never comes is simply a retry that never happens: nothing runs.)
Physical: the phone shows nothing new; the caller is told (progress message) to press Volume Up,
and ``getevent`` is watched until the deadline. A timeout denies.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal

import anyio
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult
from mcp_types.version import is_version_at_least

from sentinel_mcp.core.asking import Asker, AskUser, Channel, answered_by

log = logging.getLogger(__name__)
CONFIRM_KEY = "device_confirm"
Outcome = Literal["confirmed", "declined", "cancelled", "timeout", "unavailable", "invalid", "not_user"]


CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "confirm": {"type": "boolean", "title": "Allow", "description": "Allow this action on the phone?"}
    },
    "required": ["confirm"],
}


def _modern(ctx: Any) -> bool:
    version = getattr(ctx, "protocol_version", None)
    return isinstance(version, str) and bool(version) and is_version_at_least(version, "2026-07-28")


def _is_form_answer(content: dict[str, Any] | None) -> bool:
    return isinstance(content, dict) and set(content) == {"confirm"} and isinstance(content["confirm"], bool)


def _outcome_of(action: str, content: dict[str, Any] | None) -> Outcome:
    if action == "accept":
        # exactly {"confirm": true}; anything else is not a yes
        return "confirmed" if content == {"confirm": True} and content["confirm"] is True else "declined"
    return "declined" if action == "decline" else "cancelled"


async def confirm_by_elicitation(
    ctx: Any, message: str, digest: str, timeout: float
) -> Outcome | InputRequiredResult:
    if ctx is None:
        return "unavailable"
    ask = AskUser(Asker.DEVICE, message)
    message = ask.shown()  # labels and typed text come from the screen and the agent
    if _modern(ctx):
        responses = ctx.input_responses or {}
        state = _state(ctx.request_state)
        answer = responses.get(CONFIRM_KEY)
        if answer is not None and state.get("digest") == digest:
            if isinstance(answer, ElicitResult):
                return _judged(ctx, ask, answer)
            return "cancelled"
        caps = ctx.client_capabilities
        if caps is None or caps.elicitation is None:
            return "unavailable"
        return InputRequiredResult(
            input_requests={
                CONFIRM_KEY: ElicitRequest(
                    params=ElicitRequestFormParams(message=message, requested_schema=CONFIRM_SCHEMA)
                )
            },
            request_state=json.dumps({"digest": digest}),
        )
    result = None
    try:
        with anyio.move_on_after(timeout):
            result = await ask.push(ctx, CONFIRM_SCHEMA)  # the raw answer: who answered is on it
        if result is None:
            return "timeout"  # an answer that never comes denies
    except Exception as exc:  # noqa: BLE001 - no elicitation capability, no back channel, a transport error
        log.info("elicitation unavailable: %s", exc)
        return "unavailable"
    return _judged(ctx, ask, result)


def _judged(ctx: Any, ask: AskUser, answer: ElicitResult) -> Outcome:
    """An answer as the confirmation takes it: only the user's counts (through the gateway, its mark says who
    answered: an agent's or a peer's "yes" is nobody's), then only exactly JSON true/false."""
    if not ask.hears(ctx, answer):
        log.info("confirmation answer refused: not given by the user (%r)", answered_by(ctx, answer))
        return "not_user"
    if answer.action == "accept" and not _is_form_answer(answer.content):
        return "invalid"
    return _outcome_of(answer.action, answer.content)


def _state(raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


async def confirm_by_volume_up(gate: Any, ctx: Any, message: str, timeout: float, *,
                               in_turn: bool = False) -> Outcome:
    """``in_turn``: the caller holds the gate's ``question_turn`` (and keeps it until the action has run).
    The prompt is shown only once this question's turn has come and the phone listens for the press
    (``listening``): a question queued behind another shows nothing while that one waits for its press, and
    the person who presses the moment the prompt appears is heard."""
    message = AskUser(Asker.DEVICE, message, channel=Channel.PHONE).shown()
    deadline = anyio.current_time() + timeout

    async def prompt() -> None:
        left = max(0.0, deadline - anyio.current_time())
        note = f"{message} — press Volume Up on the phone within {left:.0f}s to allow (no press denies)."
        if ctx is None:
            return
        try:
            await ctx.report_progress(0, 1, note)
            await ctx.info(note)
        except Exception as exc:  # noqa: BLE001 - a notice that cannot be shown must not turn into a yes
            log.info("could not show the Volume Up notice: %s", exc)

    pressed = await gate.wait_for_key("KEY_VOLUMEUP", timeout=timeout, question=message, in_turn=in_turn,
                                      listening=prompt)
    return "confirmed" if pressed else "timeout"
