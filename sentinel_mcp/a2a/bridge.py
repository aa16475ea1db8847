"""Bridged chats (seed 004: "LocalAIAgent can bridge chat to other agents ... just hosting the channel").

A chat opened with a ``target`` is relayed: each message the person types goes to that agent (a guarded
``a2a__a2a_relay`` call), and its answer comes back to the person marked as another agent's. Nothing relayed
is
given to a model or a tool here. When the target asks the person for help (a HumanAssistRequest in its
answer),
the request is also kept in the assist inbox, and the person's next message on the channel continues that
agent's task: the reply goes back to it. The bridge itself is recorded (``AssistInbox.record_bridge``).
"""

from __future__ import annotations

from typing import Any

from typing import get_args

from sentinel_mcp.a2a.messages import HumanAssistRequest
from sentinel_mcp.a2a.peer_answer import NotAnAnswer, read_message, read_task
from sentinel_mcp.a2a.protocol import MAX_ID, TaskState
from sentinel_mcp.core.display_text import is_hidden, safe_text
from sentinel_mcp.core.utf8_text import json_utf8_size

MAX_TEXT = 8192
STATES = frozenset(get_args(TaskState))  # what a relayed state may be: anything else reads as "unknown"


def _task_id(value: Any) -> str | None:
    """The target's task id, kept only when an A2A message can carry it back (and a person can read it)."""
    if isinstance(value, str) and 0 < len(value) <= MAX_ID and not any(is_hidden(ch) for ch in value):
        return value
    return None


def bridgeable(settings: Any, registry: Any, target: str) -> bool:
    """Whether a chat may be bridged to ``target``: a name the config lists, or a peer found. Only a name:
    each relay reaches it as ``a2a_relay`` checks it then (a listed one's card fetched and checked, as for
    ``a2a_send``: ``listed_peer_card``), never at an address taken on trust."""
    if target in settings.bridge_targets:
        return True
    return registry is not None and registry.find(target) is not None


def _parts_of(holder: Any) -> list[Any]:
    """A message's or artifact's parts, when it has a list of them (a peer's answer may carry anything)."""
    parts = holder.get("parts") if isinstance(holder, dict) else None
    return parts if isinstance(parts, list) else []


def relayed_reply(result: Any, max_bytes: int) -> dict[str, Any]:
    """The target's answer as data for the person: texts made safe to show, a help request validated."""
    if json_utf8_size(result) > max_bytes:
        return {
            "state": "invalid",
            "texts": [],
            "note": f"the agent's answer is larger than {max_bytes} bytes",
        }
    task = result.get("task") if isinstance(result, dict) else None
    message = result.get("message") if isinstance(result, dict) else None
    try:  # typed strictly, defaults spelled out: what follows reads only what an A2A answer holds
        task = read_task(task) if task is not None else None
        message = read_message(message) if task is None and message is not None else None
    except NotAnAnswer as e:
        return {"state": "invalid", "texts": [], "note": safe_text(str(e), 300)}
    parts: list[Any] = []
    state = "message"
    task_id = None
    if isinstance(task, dict):
        got = task.get("status")
        status: dict[str, Any] = got if isinstance(got, dict) else {}
        said = status.get("state")
        state = said if isinstance(said, str) and said in STATES else "unknown"
        task_id = _task_id(task.get("id"))
        m = status.get("message")
        parts += _parts_of(m)
        artifacts = task.get("artifacts")
        for a in artifacts if isinstance(artifacts, list) else []:
            parts += _parts_of(a)
    elif isinstance(message, dict):
        parts = _parts_of(message)
    texts, assist = [], None
    for p in parts:
        if not isinstance(p, dict):
            continue
        if isinstance(p.get("text"), str):
            texts.append(safe_text(p["text"], MAX_TEXT, keep_newlines=True))
        data = p.get("data")
        if isinstance(data, dict) and data.get("type") == "human_assist_request" and assist is None:
            try:
                har = HumanAssistRequest.model_validate({k: v for k, v in data.items() if k != "type"})
            except ValueError:
                continue
            assist = {
                "agent_id": safe_text(har.agent_id, 200),
                "reason": safe_text(har.reason, 2000),
                "suggested_questions": [safe_text(q, 500) for q in har.suggested_questions],
            }
    return {"state": state, "task_id": task_id, "texts": texts[:20], "human_assist_request": assist}
