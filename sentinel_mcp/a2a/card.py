"""The agent card at ``/.well-known/agent-card.json`` (A2A v1.0 §8.2), with a weak ETag.

The HTTP JSON-RPC interface comes first (the preferred one, what vanilla clients use); the WebSocket
binding follows as the custom binding ``JSONRPC-WS`` (Arkavo's WebSocket Binding v1 draft), also
declared as an extension. The design's own JSON-RPC methods and the degraded-mode status are in a
Sentinel extension's params.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from sentinel_mcp.a2a.protocol import (
    PROTOCOL_VERSION,
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
)
from sentinel_mcp.a2a.card_signer import CardSigner
from sentinel_mcp.a2a.security import security_declaration
from sentinel_mcp.a2a.service import A2AService
from sentinel_mcp.a2a.settings import A2ASettings

CARD_PATH = "/.well-known/agent-card.json"
RPC_PATH = "/a2a"
WS_PATH = "/a2a/ws"
WS_BINDING = "JSONRPC-WS"
WS_EXTENSION = "https://arkavo.social/ext/a2a/ws-binding/v1"
SENTINEL_EXTENSION = "urn:sentinel:a2a:participant:v1"
SELF_MARK = "agentMark"  # the extension's param that lets this agent's discovery tell its own card
WS_SUBPROTOCOL = "a2a.v1.json"

SKILLS = [
    AgentSkill(
        id="sensor_request",
        name="Sensor request",
        description=(
            "Read a device sensor (location, battery, motion, ...) behind consent, scope "
            "(minimal/standard/detailed), rate limits and redaction. Send a data part "
            '{"type": "sensor_request", "sensor": "location", "scope": "minimal", "policy_tag": '
            '"<why you need it>"}; the result is a TaskResult holding a SensorResponse that lists its '
            "redactions. The device's owner must have granted you consent."
        ),
        tags=["sensor", "device", "privacy"],
        examples=[
            '{"type":"sensor_request","sensor":"location","scope":"minimal","policy_tag":"nearby-search"}'
        ],
        input_modes=["application/json"],
        output_modes=["application/json"],
    ),
    AgentSkill(
        id="tool_call",
        name="Tool call",
        description=(
            "Call one tool of this gateway's catalog, checked by its Prolog guard and audited. Send "
            '{"type": "tool_call", "tool_call_id": "...", "name": "<server>__<tool>", "args": {...}}. '
            "A call that needs a person's answer becomes TASK_STATE_INPUT_REQUIRED with a "
            "HumanAssistRequest; answer on the same taskId."
        ),
        tags=["tools", "mcp", "guarded"],
        input_modes=["application/json"],
        output_modes=["application/json"],
    ),
    AgentSkill(
        id="chat",
        name="Chat",
        description=(
            "Talk to the agent in text. Answered by the local LLM when it is on; otherwise the "
            "agent says that no responder is available (degraded mode)."
        ),
        tags=["chat", "human"],
        input_modes=["text/plain"],
        output_modes=["text/plain"],
    ),
]


def base_url_of(request: Request, settings: A2ASettings) -> str:
    if settings.public_url:
        return settings.public_url.rstrip("/")
    scheme = "https" if settings.tls else request.url.scheme
    host = request.headers.get("host") or f"{request.url.hostname}:{request.url.port}"
    return f"{scheme}://{host}"


def build_card(
    settings: A2ASettings, base_url: str, status: dict[str, Any], mark: str | None = None
) -> AgentCard:
    """``mark``: this process's discovery mark (``PeerRegistry.mark``), when it browses for peers."""
    ws_base = "wss" + base_url[5:] if base_url.startswith("https") else "ws" + base_url[4:]
    security = security_declaration(settings)
    description = settings.description
    if status.get("degraded"):
        description += " Currently in degraded mode: " + status["note"] + "."
    return AgentCard(
        name=settings.name,
        description=description,
        supported_interfaces=[
            AgentInterface(
                url=base_url + RPC_PATH, protocol_binding="JSONRPC", protocol_version=PROTOCOL_VERSION
            ),
            AgentInterface(
                url=ws_base + WS_PATH, protocol_binding=WS_BINDING, protocol_version=PROTOCOL_VERSION
            ),
        ],
        version=settings.version,
        capabilities=AgentCapabilities(
            streaming=True,
            push_notifications=False,
            extended_agent_card=False,
            extensions=[
                AgentExtension(
                    uri=WS_EXTENSION,
                    description=f"JSON-RPC 2.0 over WebSocket at {WS_PATH}, subprotocol {WS_SUBPROTOCOL}",
                    params={"subprotocols": [WS_SUBPROTOCOL]},
                ),
                AgentExtension(
                    uri=SENTINEL_EXTENSION,
                    description="the on-device participant's messages and status",
                    params={
                        "wsMethods": [
                            "sensor_request",
                            "tool_call",
                            "chat_open",
                            "chat_message",
                            "chat_close",
                        ],
                        "dataPartTypes": ["sensor_request", "tool_call", "task_offer"],
                        "status": status,
                        **({SELF_MARK: mark} if mark else {}),
                    },
                ),
            ],
        ),
        security_schemes=security[0] if security else None,
        security_requirements=security[1] if security else None,
        default_input_modes=["application/json", "text/plain"],
        default_output_modes=["application/json", "text/plain"],
        skills=SKILLS,
    )


def weak_etag(body: bytes) -> str:
    return f'W/"{hashlib.sha256(body).hexdigest()[:32]}"'


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    opaque = etag[2:]  # weak comparison (RFC 9110 §8.8.3.2): ignore W/ on both sides
    return any(tag.strip().removeprefix("W/") == opaque for tag in if_none_match.split(","))


def make_card_endpoint(service: A2AService):  # type: ignore[no-untyped-def]
    key = service.settings.card_signing_key
    # (a bad key fails when the app is built, not on a request)
    signer = CardSigner(key, service.settings.card_signature_lifetime) if key else None

    async def agent_card(request: Request) -> Response:
        mark = service.peers.mark if service.peers is not None else None
        card = build_card(service.settings, base_url_of(request, service.settings), service.status(), mark)
        wire = signer.sign(card.to_wire()) if signer is not None else card.to_wire()
        body = json.dumps(wire, separators=(",", ":"), sort_keys=True).encode()
        etag = weak_etag(body)
        headers = {"ETag": etag, "Cache-Control": "no-cache"}  # cache, but revalidate: status may change
        if etag_matches(request.headers.get("if-none-match"), etag):
            return Response(status_code=304, headers=headers)
        return Response(body, media_type="application/json", headers=headers)

    return agent_card
