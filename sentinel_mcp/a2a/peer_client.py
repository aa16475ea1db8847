"""Talking to another A2A agent: SendMessage/GetTask over its JSON-RPC interface (httpx2)."""

from __future__ import annotations

import ssl
import uuid
from typing import Any

import httpx2

from sentinel_mcp.a2a.protocol import PROTOCOL_VERSION, Message, Part


class PeerError(Exception):
    """The peer answered with a JSON-RPC error, or not at all."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


def build_message(text: str | None = None, data: dict[str, Any] | None = None, task_id: str | None = None,
                  context_id: str | None = None) -> Message:
    parts = []
    if text:
        parts.append(Part.of_text(text))
    if data is not None:
        parts.append(Part.of_data(data))
    if not parts:
        raise ValueError("a message needs text or data")
    return Message(message_id=str(uuid.uuid4()), role="ROLE_USER", parts=parts, task_id=task_id,
                   context_id=context_id)


async def call_peer(rpc_url: str, method: str, params: dict[str, Any], token: str | None = None,
                    timeout: float = 60.0, ca_file: str | None = None) -> Any:
    headers = {"A2A-Version": PROTOCOL_VERSION, "Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}
    try:
        verify: Any = ssl.create_default_context(cafile=ca_file) if ca_file else True
        async with httpx2.AsyncClient(timeout=timeout, follow_redirects=False, verify=verify) as http:
            resp = await http.post(rpc_url, json=body, headers=headers)
    except httpx2.HTTPError as e:
        raise PeerError(f"peer unreachable at {rpc_url}: {type(e).__name__}") from None
    if resp.status_code == 401:
        raise PeerError(f"peer refused our credentials (401): {resp.headers.get('www-authenticate', '')}", 401)
    if resp.status_code != 200:
        raise PeerError(f"peer answered HTTP {resp.status_code}")
    try:
        reply = resp.json()
    except ValueError:
        raise PeerError("peer answered something that is not JSON") from None
    if not isinstance(reply, dict):
        raise PeerError("peer answered a non-object JSON-RPC response")
    if "error" in reply:
        err = reply["error"] if isinstance(reply["error"], dict) else {}
        raise PeerError(f"peer error {err.get('code')}: {err.get('message')}", err.get("code"))
    return reply.get("result")


async def send_message(rpc_url: str, message: Message, token: str | None = None,
                       return_immediately: bool = False, ca_file: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"message": message.to_wire()}
    if return_immediately:
        params["configuration"] = {"returnImmediately": True}
    result = await call_peer(rpc_url, "SendMessage", params, token, ca_file=ca_file)
    if not isinstance(result, dict) or not ({"task", "message"} & set(result)):
        raise PeerError("peer's SendMessage result has neither task nor message")
    return result
