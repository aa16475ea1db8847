"""Chat channels opened by ``chat_open`` on the WebSocket binding: a person talks to this agent.

Replies come from the local LLM (``llm__llm_generate``, called through the guard like any tool) when
the catalog has it. Without it the channel stays open in degraded mode and each reply says that no
responder is available. Sentinel only hosts the channel; it does not coordinate.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import BaseModel, Field

from sentinel_mcp.a2a.assist_inbox import MAX_REPLY
from sentinel_mcp.a2a.bridge import bridgeable
from sentinel_mcp.a2a.chat_memory import Transcript
from sentinel_mcp.a2a.actions import LLM_TOOL, Capabilities, fit_arguments, question_wire, result_text
from sentinel_mcp.a2a.jsonrpc import INVALID_PARAMS, RpcError
from sentinel_mcp.a2a.service import A2AService
from sentinel_mcp.core.decision import Answer
from sentinel_mcp.core.port import Completed, NeedsInput
from sentinel_mcp.core.tool_ref import ToolRef, exposed_name
from sentinel_mcp.core.typed_text import TypedTextRefused, typed_text

MAX_CHANNELS = 16
RELAY_TOOL = ToolRef("a2a", "a2a_relay")  # the a2a built-in's: each relayed message is a guarded call
SYSTEM = "You are Sentinel, an on-device assistant talking with a person over a chat channel. Be brief."
DEGRADED = ("No responder is available: this agent has no local LLM and no orchestrator (degraded mode). "
            "Sensor requests and tool calls still work.")


class ChatOpenParams(BaseModel):
    topic: str | None = Field(None, max_length=500)
    target: str | None = Field(None, min_length=1, max_length=300)  # bridge the chat to this agent


class ChatMessageParams(BaseModel):
    channel_id: str
    text: str = Field(min_length=1, max_length=8192)
    answers: dict[str, Answer] | None = None  # to a guard's questions about the previous turn


class ChatCloseParams(BaseModel):
    channel_id: str


@dataclass
class Channel:
    id: str
    owner: str
    topic: str | None
    # its turns, counted against its owner's bytes over all its chats (chat_memory.py)
    transcript: Transcript = field(init=False)
    asked: list[str] = field(default_factory=list)  # keys of the guard's open questions on this channel
    target: str | None = None  # a bridged channel: the agent it is relayed to
    remote_task: str | None = None  # the target's task waiting for the person (its help request)
    request_id: str | None = None  # that help request in the assist inbox

    def __post_init__(self) -> None:
        self.transcript = Transcript(self.owner)

    @property
    def turns(self) -> list[tuple[str, str]]:  # (speaker, text)
        return self.transcript.turns


class ChatHub:
    """The chat channels of one WebSocket connection (closed with it: ``close_all``)."""

    def __init__(self, service: A2AService, recheck: Callable[[], Any] | None = None) -> None:
        self.service = service
        self.recheck = recheck  # the connection's credentials, checked again before each call is sent
        self.channels: dict[str, Channel] = {}

    def _get(self, channel_id: str, caller: str) -> Channel:
        ch = self.channels.get(channel_id)
        if ch is None or ch.owner != caller:
            raise RpcError(INVALID_PARAMS, f"Invalid params: no open chat channel {channel_id}")
        return ch

    async def open(self, params: ChatOpenParams, caller: str) -> dict[str, Any]:
        if len(self.channels) >= MAX_CHANNELS:
            raise RpcError(
                INVALID_PARAMS,
                f"Invalid params: at most {MAX_CHANNELS} chat channels per connection; close one first",
            )
        ch = Channel(id=str(uuid.uuid4()), owner=caller, topic=params.topic)
        if params.target is not None:
            return await self._open_bridge(ch, params.target, caller)
        self._add(ch)
        llm = Capabilities.of(self.service.port).llm
        status = self.service.status()
        return {
            "channel_id": ch.id,
            "responder": "local_llm" if llm else "none",
            "degraded": not llm,
            "status": status,
            "note": "" if llm else DEGRADED,
        }

    async def _open_bridge(self, ch: Channel, target: str, caller: str) -> dict[str, Any]:
        # a bridged chat is a person's: the target's help requests are answered by its next message, and its
        # words go out under Sentinel's token. Another agent (an A2A key's name) talks to agents itself
        principal = self.service.port.principal_for(caller, _chat_session(caller, ch.id), "a2a")
        if getattr(principal, "agent", True):
            raise RpcError(
                INVALID_PARAMS,
                "Invalid params: only a person's chat is bridged to another agent; you sign in as an agent "
                "(reach it directly; Sentinel does not route)",
            )
        if not bridgeable(self.service.settings, self.service.peers, target):
            raise RpcError(
                INVALID_PARAMS,
                f"Invalid params: {target[:80]!r} is not an agent chats may be bridged to "
                "(sentinel.a2a.bridge_targets, or a verified peer)",
            )
        if self.service.inbox is None:
            raise RpcError(
                INVALID_PARAMS, "Invalid params: bridged chats need the assist inbox (not running here)"
            )
        ch.target = target
        await asyncio.to_thread(
            self.service.inbox.record_bridge, ch.id, caller, target
        )  # recorded before use
        self._add(ch)
        return {
            "channel_id": ch.id,
            "responder": "bridge",
            "target": target,
            "degraded": False,
            "note": f"this chat is relayed to the agent {target!r}; its answers are its own, and Sentinel "
                "acts "
            "on none of them",
        }

    async def _relay(self, ch: Channel, params: ChatMessageParams, caller: str) -> dict[str, Any]:
        """Pass the person's words to the target and its answer back, marked; act on nothing."""
        inbox = self.service.inbox
        assert inbox is not None and ch.target is not None
        if (
            ch.request_id is not None
        ):  # this message is the person's reply: kept by the reply rule, so checked first
            try:
                typed_text(params.text, limit=MAX_REPLY)
            except TypedTextRefused as e:  # nothing relayed, the request still waits for a reply
                return {
                    "channel_id": ch.id,
                    "responder": "bridge",
                    "from_agent": ch.target,
                    "relayed": False,
                    "refused": str(e),
                }
        args = {"target": ch.target, "text": params.text, "context_id": ch.id, "task_id": ch.remote_task}
        relay = exposed_name(RELAY_TOOL, self.service.port) or RELAY_TOOL.identity  # by the catalog's name
        outcome = await self.service.port.invoke(
            relay,
            {k: v for k, v in args.items() if v is not None},
            session_id=_chat_session(caller, ch.id),
            client=caller,
            origin="a2a",
            principal=caller,
            recheck=self.recheck,
        )
        base = {"channel_id": ch.id, "responder": "bridge", "from_agent": ch.target, "relayed": True}
        if not isinstance(outcome, Completed):
            return base | {"refused": outcome.reason}
        if outcome.result.is_error:
            return base | {"error": result_text(outcome.result)[:500] or "the relay failed"}
        if ch.request_id is not None:  # the person's message answered the target's help request
            await asyncio.to_thread(inbox.answer, ch.request_id, params.text)
            ch.request_id = None
        data = outcome.result.structured_content or {}
        data = data.get("result", data) if isinstance(data, dict) else {}
        await asyncio.to_thread(inbox.bridge_relayed, ch.id)
        reply = base | {
            "state": data.get("state"),
            "text": "\n".join(data.get("texts") or []),
            "note": "from another agent, relayed as it is; Sentinel did not act on it",
        }
        assist = data.get("human_assist_request")
        if assist and data.get("state") in ("TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"):
            ch.remote_task = data.get("task_id")
            ch.request_id = await asyncio.to_thread(
                inbox.add,
                from_agent=ch.target,
                reason=assist["reason"],
                questions=assist["suggested_questions"],
                context=assist.get("agent_id"),
                channel=ch.id,
                task_id=ch.remote_task,
            )
            reply["human_assist_request"] = assist | {
                "request_id": ch.request_id,
                "how": "your next message on this channel is the reply",
            }
        else:
            ch.remote_task = None
        return reply

    async def say(self, params: ChatMessageParams, caller: str) -> dict[str, Any]:
        ch = self._get(params.channel_id, caller)
        if ch.target is not None:
            return await self._relay(ch, params, caller)
        if params.answers is None:
            self._keep(ch, "user", params.text)
        tool = Capabilities.of(self.service.port).named.get(LLM_TOOL)
        if tool is None:
            return {"channel_id": ch.id, "responder": "none", "degraded": True, "text": DEGRADED}
        transcript = "\n".join(f"{who}: {text}" for who, text in ch.turns) + "\nassistant:"
        answers = None
        if params.answers is not None:  # a peer's answer is not our user's: provenance from settings
            unasked = sorted(set(params.answers) - set(ch.asked))
            if unasked:  # only the questions this channel was asked, once
                raise RpcError(
                    INVALID_PARAMS,
                    f"Invalid params: no open question {', '.join(unasked)} on this "
                    f"channel; asked: {', '.join(ch.asked) or 'nothing'}",
                )
            ch.asked = []
            answers = {
                k: a.model_copy(update={"provenance": self.service.settings.answers_provenance})
                for k, a in params.answers.items()
            }
        outcome = await self.service.port.invoke(
            tool.name,
            fit_arguments(tool, {"prompt": transcript, "system": SYSTEM}),
            session_id=_chat_session(caller, ch.id),
            client=caller,
            origin="a2a",
            answers=answers,
            principal=caller,  # the peer's own reach and record: never Sentinel's own (it reaches every tool)
            recheck=self.recheck,
        )
        if isinstance(outcome, Completed):
            text = result_text(outcome.result)
            if outcome.result.is_error:
                return {"channel_id": ch.id, "responder": "local_llm", "error": text or "the LLM failed"}
            self._keep(ch, "assistant", text)
            return {"channel_id": ch.id, "responder": "local_llm", "text": text}
        if isinstance(outcome, NeedsInput):
            ch.asked = [q.key for q in outcome.questions]
            return {
                "channel_id": ch.id,
                "responder": "local_llm",
                "input_required": {
                    "reason": outcome.reason,
                    "questions": [question_wire(q) for q in outcome.questions],
                },
            }
        return {"channel_id": ch.id, "responder": "local_llm", "refused": outcome.reason}

    def _add(self, ch: Channel) -> None:
        self.channels[ch.id] = ch
        self.service.chat_memory.opened(ch.transcript)

    def _keep(self, ch: Channel, speaker: str, text: str) -> None:
        """A turn of the transcript, cut to the last ``chat_max_turns`` exchanges as it is kept (cut only
        before the LLM's call, a channel with no responder kept every message, without bound), and the
        owner's chats to their bytes, oldest turns first (one caller's 16 channels on each of 32 connections
        held about 160 MB)."""
        self.service.chat_memory.keep(ch.transcript, speaker, text, 2 * self.service.settings.chat_max_turns)

    async def close(self, params: ChatCloseParams, caller: str) -> dict[str, Any]:
        ch = self._get(params.channel_id, caller)
        del self.channels[ch.id]
        self.service.chat_memory.closed(ch.transcript)
        return {"channel_id": ch.id, "closed": True}

    def close_all(self) -> None:
        """The connection is gone: its channels and what they held."""
        for ch in list(self.channels.values()):
            self.service.chat_memory.closed(ch.transcript)
        self.channels.clear()


def _chat_session(caller: str, channel: str) -> str:
    """A chat channel's session: the caller's own (its name first, as the A2A tasks' sessions), so the
    conversation, its facts and its audit rows are that peer's."""
    return f"{caller}/a2a-chat-{channel}"
