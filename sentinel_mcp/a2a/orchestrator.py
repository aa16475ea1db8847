"""Offering an intent to the orchestrator (seed 004: "LocalAIAgent wraps as A2A TaskOffer, sends to
Orchestrator
(if available)"), and reading its answer as hostile data.

The orchestrator is ``sentinel.a2a.orchestrator_url`` (its JSON-RPC endpoint), or, with
``orchestrator_discover``, a peer found over mDNS whose verified agent card declares the role (a skill tagged
``orchestrator``). The offer is one bounded exchange: SendMessage, then GetTask while the task is submitted or
working, until ``orchestrator_timeout`` has passed. Only COMPLETED counts as taken; anything else (declined,
failed, a question, a state A2A does not have, a malformed or oversized answer, unreachable, too slow) is a
decline with its reason, and the local loop takes the task in degraded mode. What the orchestrator returns is
relayed as data, marked as another agent's, never acted on.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import anyio

from sentinel_mcp.a2a.actions import AGENT_TOOL, LLM_TOOL, SENSOR_TOOL
from sentinel_mcp.a2a.bridge import STATES
from sentinel_mcp.a2a.messages import DeviceCaps, TaskOffer, typed
from sentinel_mcp.a2a.peer_answer import read_task
from sentinel_mcp.a2a.relayed_data import relayed_data
from sentinel_mcp.a2a.peer_client import PeerError, build_message, call_peer, shown_url
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.core.display_text import Marked, compose, error_text, safe_text
from sentinel_mcp.core.tool_ref import FindsTools, ToolRef, exposed_name
from sentinel_mcp.core.utf8_text import json_utf8_size

log = logging.getLogger(__name__)
ROLE_TAG = "orchestrator"
# the only states worth waiting on: anything else is the orchestrator's decision now (COMPLETED takes the
# task; a question, which Sentinel never answers for it, a refusal, or a state A2A does not have declines it)
PENDING = frozenset({"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"})
POLL_SECONDS = 0.2
MAX_ARTIFACTS = 16
MAX_PARTS = 32  # per artifact: each is bounded (relayed_data.py), so their number is too
MAX_REASON = 500


@dataclass
class OfferOutcome:
    taken: bool
    reason: str
    orchestrator: str = ""
    task_id: str | None = None
    state: str | None = None
    artifacts: list[dict[str, Any]] = field(default_factory=list)  # relayed: {"from_agent", "name", "parts"}

    def public(self) -> dict[str, Any]:
        return {
            "taken": self.taken,
            "reason": self.reason,
            "orchestrator": self.orchestrator,
            "task_id": self.task_id,
            "state": self.state,
            "artifacts": self.artifacts,
        }


def orchestrator_rpc(settings: A2ASettings, registry: Any = None) -> str | None:
    """The configured orchestrator, else (when allowed) a verified peer whose card declares the role and is
    signed by a pinned or trusted key (``card_signature.py``): anyone on the link can announce such a card,
    and the orchestrator receives every principal's intents."""
    if settings.orchestrator_url:
        return settings.orchestrator_url
    if settings.orchestrator_discover and registry is not None:
        claimants = {
            peer.rpc_url
            for peer in registry.verified()
            if peer.trust.verified
            and any(ROLE_TAG in (s.tags or []) or s.id == ROLE_TAG for s in peer.card.skills)
        }
        # a card names its own role: when a second verified agent claims it too, neither gets every peer's
        # intents (the first found used to, and a newcomer could be found first); intents then run locally
        if len(claimants) == 1:
            return claimants.pop()
        if claimants:
            log.warning("A2A: %d verified peers claim the orchestrator role: none is used", len(claimants))
    return None


# each capability a TaskOffer states, by the tool that shows it: resolved from the catalog (by the tool's
# identity), so a built-in served under another prefix still counts
AI_TOOLS = (
    ("local_llm", LLM_TOOL),
    ("phone_agent", AGENT_TOOL),
    ("app_builds", ToolRef("swarm", "swarm_build")),
)


def device_caps(tool_names: list[str], catalog: FindsTools | None = None) -> tuple[list[str], DeviceCaps]:
    """Sentinel's capabilities as the design's TaskOffer states them (from the catalog now): ``tool_names``
    are the exposed names offered; ``catalog`` resolves each capability's tool to its exposed name (without
    one, e.g. the built-in run alone, the default prefix is assumed)."""
    names = set(tool_names)
    servers = sorted({n.split("__", 1)[0] for n in names if "__" in n})  # a hint: the prefixes as shown

    def offered(ref: ToolRef) -> bool:
        return (exposed_name(ref, catalog) if catalog is not None else ref.identity) in names

    ai = [name for name, ref in AI_TOOLS if offered(ref)]
    sensors = ["location", "battery"] if offered(SENSOR_TOOL) else []
    return servers, DeviceCaps(ai_capabilities=ai, sensors=sensors, platform="android")


async def offer(
    settings: A2ASettings,
    rpc_url: str,
    intent: str,
    intent_id: str,
    tool_names: list[str],
    catalog: FindsTools | None = None,
    context_id: str | None = None,
) -> OfferOutcome:
    """``intent_id`` and ``context_id`` as they go out: behind the gateway, in the offering principal's form
    (``peer_threads``), so two principals' intents are two at the orchestrator."""
    hint, caps = device_caps(tool_names, catalog)
    task_offer = TaskOffer(intent_id=intent_id, intent=intent, capabilities_hint=hint, device_caps=caps)
    message = build_message(data=typed("task_offer", task_offer), context_id=context_id)
    token = settings.peer_tokens.get(rpc_url) or settings.peer_tokens.get(rpc_url.rsplit("/", 1)[0])
    deadline = time.monotonic() + settings.orchestrator_timeout
    out = OfferOutcome(taken=False, reason="", orchestrator=shown_url(rpc_url))
    try:
        with anyio.fail_after(settings.orchestrator_timeout):
            result = await call_peer(
                rpc_url,
                "SendMessage",
                {"message": message.to_wire()},
                token,
                timeout=settings.orchestrator_timeout,
                tls=settings.peer_client_tls,
                max_bytes=settings.max_frame_bytes,
            )
            task = _task_of(result, settings.max_frame_bytes)
            while task["status"]["state"] in PENDING:
                await anyio.sleep(POLL_SECONDS)
                task = _task_of(
                    {
                        "task": await call_peer(
                            rpc_url,
                            "GetTask",
                            {"id": task["id"]},
                            token,
                            timeout=max(0.5, deadline - time.monotonic()),
                            tls=settings.peer_client_tls,
                            max_bytes=settings.max_frame_bytes,
                        )
                    },
                    settings.max_frame_bytes,
                )
    except TimeoutError:
        out.reason = f"the orchestrator did not finish within {settings.orchestrator_timeout:g} s"
        return out
    except PeerError as e:  # (what went wrong, not where: the reason reaches the peer whose intent it was)
        out.reason = compose("the orchestrator is unreachable or refused the offer: ",
                             safe_text(e.why, MAX_REASON))
        return out
    except ValueError as e:
        out.reason = compose("the orchestrator's answer is not usable: ", error_text(e, MAX_REASON))
        return out
    said_state = task["status"]["state"]  # the orchestrator's word: kept only when it is an A2A state
    out.task_id = safe_text(str(task.get("id")), 100)
    out.state = said_state if said_state in STATES else "unknown"
    if out.state != "TASK_STATE_COMPLETED":
        said = _status_text(task)
        state = (
            said_state.removeprefix("TASK_STATE_").lower()
            if said_state in STATES
            else Marked(f"{safe_text(said_state, 60)!r}, not a state")
        )
        out.reason = compose("the orchestrator answered ", state, *((": ", said) if said else ()))
        return out
    out.taken = True
    out.reason = "the orchestrator took the task"
    out.artifacts = [
        _relayed(a) for a in (task.get("artifacts") or [])[:MAX_ARTIFACTS] if isinstance(a, dict)
    ]
    return out


def _task_of(result: Any, max_bytes: int) -> dict[str, Any]:
    """The Task in a SendMessage/GetTask result; ValueError when it is missing, malformed or too large."""
    if json_utf8_size(result) > max_bytes:
        raise ValueError(f"larger than {max_bytes} bytes")
    task = result.get("task") if isinstance(result, dict) else None
    if task is None:
        raise ValueError("no task in the answer (a bare message is not a decision)")
    read = read_task(task)  # (NotAnAnswer is a ValueError) typed strictly, its defaults spelled out
    if not read["id"]:
        raise ValueError("the task has no id")
    return read


def _status_text(task: dict[str, Any]) -> str:
    message = task.get("status", {}).get("message") or {}
    parts = message.get("parts") if isinstance(message, dict) else None
    texts = [p["text"] for p in parts or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return safe_text(" ".join(texts), MAX_REASON)


def _relayed(artifact: dict[str, Any]) -> dict[str, Any]:
    """Another agent's artifact, kept as data: texts and data made safe to show, marked as from the
    orchestrator."""
    parts: list[dict[str, Any]] = []
    said = artifact.get("parts")
    for p in said[:MAX_PARTS] if isinstance(said, list) else []:
        if not isinstance(p, dict):
            continue
        if isinstance(p.get("text"), str):
            parts.append({"text": safe_text(p["text"], 8192, keep_newlines=True)})
        elif "data" in p:  # bounded, made safe, and wrapped: never beside Sentinel's own fields
            parts.append({"data": relayed_data(p["data"], ROLE_TAG)})
    return {"from_agent": ROLE_TAG, "name": safe_text(str(artifact.get("name") or ""), 100), "parts": parts}


def new_intent_id() -> str:
    return str(uuid.uuid4())
